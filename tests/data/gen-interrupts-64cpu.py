#!/usr/bin/env python3
# Generates interrupts.synthetic-64cpu: /proc/interrupts of a 64-CPU x86
# machine, in the kernel's layout (show_interrupts / arch_show_interrupts),
# with values from a formula the unit tests recompute:
#   value(row r, cpu c) = r * 100000 + c * (r + 1)
# except LOC on CPU 5, which is 12345678901 (wider than the %10u column).
NCPU = 64
PREC = 4  # nr_irqs has 4 digits on this machine
irqs = [
    (0, "IO-APIC", "2-edge", "timer"),
    (8, "IO-APIC", "8-edge", "rtc0"),
    (9, "IO-APIC", "9-fasteoi", "acpi"),
    (120, "DMAR-MSI", "0-edge", "dmar0"),
    (121, "DMAR-MSI", "1-edge", "dmar1"),
    (1024, "PCI-MSIX-0000:3b:00.0", "0-edge", "mlx5_async0@pci:0000:3b:00.0"),
    (1025, "PCI-MSIX-0000:3b:00.0", "1-edge", "mlx5_comp0@pci:0000:3b:00.0"),
    (2048, "IR-PCI-MSIX-0000:5e:00.0", "3-edge", "nvme0q3"),
]
arch = [
    ("NMI", "Non-maskable interrupts"),
    ("LOC", "Local timer interrupts"),
    ("SPU", "Spurious interrupts"),
    ("PMI", "Performance monitoring interrupts"),
    ("IWI", "IRQ work interrupts"),
    ("RTR", "APIC ICR read retries"),
    ("RES", "Rescheduling interrupts"),
    ("CAL", "Function call interrupts"),
    ("TLB", "TLB shootdowns"),
    ("TRM", "Thermal event interrupts"),
    ("THR", "Threshold APIC interrupts"),
    ("DFR", "Deferred Error APIC interrupts"),
    ("MCE", "Machine check exceptions"),
    ("MCP", "Machine check polls"),
]

def value(r, c, key):
    if key == "LOC" and c == 5:
        return 12345678901
    return r * 100000 + c * (r + 1)

out = [" " * (PREC + 8) + "".join("CPU%-8d" % c for c in range(NCPU))]
r = 0
for irq, chip, hw, name in irqs:
    cols = "".join("%10u " % value(r, c, str(irq)) for c in range(NCPU))
    out.append("%*d: %s %8s  %s  %s" % (PREC, irq, cols, chip, hw, name))
    r += 1
for key, desc in arch:
    cols = "".join("%10u " % value(r, c, key) for c in range(NCPU))
    out.append("%*s: %s  %s" % (PREC, key, cols, desc))
    r += 1
out.append("%*s: %10u" % (PREC, "ERR", 3))
out.append("%*s: %10u" % (PREC, "MIS", 0))
for key, desc in [("PIN", "Posted-interrupt notification event"),
                  ("NPI", "Nested posted-interrupt event"),
                  ("PIW", "Posted-interrupt wakeup event")]:
    cols = "".join("%10u " % value(r, c, key) for c in range(NCPU))
    out.append("%*s: %s  %s" % (PREC, key, cols, desc))
    r += 1
print("\n".join(out))

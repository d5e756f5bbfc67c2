/* The MariaDB server status counters kab-sysbench-oltp reads before and
 * after the benchmark and writes as deltas (NAME VALUE UNIT), and what
 * kab knows of each as mariadb.NAME: one list for the program and for
 * the sysbench-oltp workload's metric declarations (wl_sysbench.c).
 * X(name, unit, direction, label): direction is HIGHER, LOWER or NEUTRAL,
 * label NULL for "mariadb.NAME". */
#pragma once

#define MARIADB_COUNTERS(X) \
	X(Innodb_buffer_pool_reads, "reads", LOWER, "buffer pool reads from disk") \
	X(Innodb_buffer_pool_read_requests, "reads", NEUTRAL, NULL) \
	X(Innodb_buffer_pool_write_requests, "writes", NEUTRAL, NULL) \
	X(Innodb_buffer_pool_pages_flushed, "pages", NEUTRAL, NULL) \
	X(Innodb_buffer_pool_wait_free, "waits", NEUTRAL, NULL) \
	X(Innodb_data_reads, "reads", NEUTRAL, NULL) \
	X(Innodb_data_writes, "writes", NEUTRAL, NULL) \
	X(Innodb_data_read, "bytes", NEUTRAL, NULL) \
	X(Innodb_data_written, "bytes", NEUTRAL, NULL) \
	X(Innodb_data_fsyncs, "fsyncs", NEUTRAL, NULL) \
	X(Innodb_os_log_written, "bytes", NEUTRAL, NULL) \
	X(Innodb_row_lock_waits, "waits", NEUTRAL, NULL) \
	X(Innodb_rows_read, "rows", NEUTRAL, NULL) \
	X(Questions, "queries", NEUTRAL, NULL) \
	X(Com_commit, "commits", NEUTRAL, NULL)

/* Whether InnoDB got io_uring (1) or fell back to libaio (0). */
#define MARIADB_IO_URING(X) X(innodb_io_uring, "flag", NEUTRAL, NULL)

/* All that the program writes. */
#define MARIADB_METRICS(X) MARIADB_COUNTERS(X) MARIADB_IO_URING(X)

/* What kab (harness/cli, the client) and kabd (harness/daemon, the
 * server) agree on over HTTP, kept below both so that neither includes
 * the other. The socket's default path is config.h's
 * CONFIG_SOCKET_DEFAULT. */
#pragma once

/* Where the API's routes live: /api/v1/jobs, /api/v1/runs/ID/samples... */
#define KAB_API_ROOT "/api/v1"
/* The one content type of a POST (the job file's text for POST /jobs, an
 * empty body for cancel): a browser cannot send it across sites without a
 * CORS preflight, which kabd never answers. */
#define KAB_API_JOB_TYPE "application/x-kab-job"
/* The most rows a page of kabd's lists holds; a larger ?limit is taken as
 * this. */
#define KAB_API_PAGE_MAX 500

/* Reference for the HTTP benchmark: the same libmicrohttpd configuration (epoll, thread pool) answering
   /healthz from C with no Swift layer, so the benchmark shows what our Swift server costs on top. */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size, void **req_cls) {
    (void)cls; (void)url; (void)method; (void)version; (void)upload_data; (void)upload_data_size;
    static int marker;
    if (*req_cls == NULL) { *req_cls = &marker; return MHD_YES; }
    static const char body[] = "{\"status\":\"ok\"}";
    struct MHD_Response *response = MHD_create_response_from_buffer(sizeof body - 1, (void *)body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(response, "Content-Type", "application/json");
    enum MHD_Result result = MHD_queue_response(connection, MHD_HTTP_OK, response);
    MHD_destroy_response(response);
    return result;
}

int main(int argc, char **argv) {
    unsigned short port = argc > 1 ? (unsigned short)atoi(argv[1]) : 18090;
    unsigned int threads = argc > 2 ? (unsigned int)atoi(argv[2]) : 8;
    struct MHD_Daemon *daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, port, NULL, NULL,
                                                 answer, NULL, MHD_OPTION_THREAD_POOL_SIZE, threads,
                                                 MHD_OPTION_CONNECTION_LIMIT, 4096u, MHD_OPTION_END);
    if (!daemon) { fprintf(stderr, "cannot listen on %u\n", port); return 1; }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int received;
    sigwait(&set, &received);
    MHD_stop_daemon(daemon);
    return 0;
}

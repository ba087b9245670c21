#ifndef BRIDGE_MHD_SHIMS_H
#define BRIDGE_MHD_SHIMS_H

#include <stddef.h>
#include <stdint.h>
#include <microhttpd.h>

/* Settings for bridge_mhd_start; fixed-arity because MHD_start_daemon is variadic. */
struct bridge_mhd_settings {
    const char *host;              /* numeric IPv4 or IPv6 address */
    uint16_t port;                 /* 0 picks a free port */
    unsigned int thread_pool_size;
    unsigned int connection_limit;
    unsigned int per_ip_connection_limit;
    unsigned int connection_timeout_seconds;
    size_t connection_memory_limit;
    MHD_NotifyConnectionCallback notify_connection; /* may be NULL */
    void *notify_connection_context;
};

/* What the URI log callback leaves in a request's slot when the path of its target holds an encoded NUL (`%00`):
   libmicrohttpd decodes the path in place, so the handler's C string would end there (`/metrics%00.txt` would read
   as `/metrics`). Any other request starts with an empty slot. */
void *bridge_mhd_nul_in_path_marker(void);

/* Starts an epoll thread-pool daemon. Returns NULL if the address is invalid or cannot be bound. */
struct MHD_Daemon *bridge_mhd_start(const struct bridge_mhd_settings *settings,
                                    MHD_AccessHandlerCallback access_handler,
                                    void *access_context,
                                    MHD_RequestCompletedCallback completed,
                                    void *completed_context);

/* The port the daemon actually listens on (useful when started with port 0). */
uint16_t bridge_mhd_bound_port(struct MHD_Daemon *daemon);

/* Writes the peer's numeric address into buffer; returns 0 on success. */
int bridge_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t length);

/* The socket of a connection, or -1. */
int bridge_mhd_connection_socket(struct MHD_Connection *connection);

/* The per-connection pointer set through MHD_OPTION_NOTIFY_CONNECTION, or NULL. */
void *bridge_mhd_socket_context(struct MHD_Connection *connection);

/* 1 when a header line of the request was continued on the next line (obs-fold), else 0. libmicrohttpd 0.9.75
   glues such a continuation onto a copy of the field's *name* ("Content-Length: 6" + " 0" is read as
   "Content-Length0: 6"), so it cannot be seen in the fields it hands over: see shims.c. */
int bridge_mhd_has_folded_header(struct MHD_Connection *connection);

#endif

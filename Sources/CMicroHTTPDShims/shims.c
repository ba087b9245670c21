#include "CMicroHTTPDShims.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

struct MHD_Daemon *bridge_mhd_start(const struct bridge_mhd_settings *s,
                                    MHD_AccessHandlerCallback access_handler,
                                    void *access_context,
                                    MHD_RequestCompletedCallback completed,
                                    void *completed_context) {
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
    struct sockaddr *address;
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME;

    memset(&v4, 0, sizeof v4);
    memset(&v6, 0, sizeof v6);
    if (inet_pton(AF_INET, s->host, &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons(s->port);
        address = (struct sockaddr *)&v4;
    } else if (inet_pton(AF_INET6, s->host, &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons(s->port);
        address = (struct sockaddr *)&v6;
        flags |= MHD_USE_IPv6;
    } else {
        return NULL;
    }

    return MHD_start_daemon(flags, s->port, NULL, NULL, access_handler, access_context,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_THREAD_POOL_SIZE, s->thread_pool_size,
                            MHD_OPTION_CONNECTION_LIMIT, s->connection_limit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, s->per_ip_connection_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, s->connection_timeout_seconds,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, s->connection_memory_limit,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
                            s->notify_connection == NULL ? MHD_OPTION_END : MHD_OPTION_NOTIFY_CONNECTION,
                            s->notify_connection, s->notify_connection_context,
                            MHD_OPTION_END);
}

uint16_t bridge_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

int bridge_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t length) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL || length == 0) return -1;
    const struct sockaddr *sa = info->client_addr;
    if (sa->sa_family == AF_INET) {
        /* By hand: glibc's inet_ntop formats IPv4 with sprintf, a measurable share of a small request. */
        const unsigned char *octets = (const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr;
        char text[16];
        size_t used = 0;
        for (int i = 0; i < 4; i++) {
            unsigned value = octets[i];
            if (value >= 100) text[used++] = (char)('0' + value / 100);
            if (value >= 10) text[used++] = (char)('0' + value / 10 % 10);
            text[used++] = (char)('0' + value % 10);
            if (i < 3) text[used++] = '.';
        }
        if (used + 1 > length) return -1;
        memcpy(buffer, text, used);
        buffer[used] = '\0';
        return 0;
    }
    if (sa->sa_family != AF_INET6) return -1;
    const void *raw = &((const struct sockaddr_in6 *)sa)->sin6_addr;
    return inet_ntop(AF_INET6, raw, buffer, (socklen_t)length) == NULL ? -1 : 0;
}

int bridge_mhd_connection_socket(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

void *bridge_mhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

#include "CMicroHTTPDShims.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

static char bridge_mhd_nul_in_path;

void *bridge_mhd_nul_in_path_marker(void) { return &bridge_mhd_nul_in_path; }

/* Called with the request target as received, before libmicrohttpd splits off the query and decodes the path. */
static void *bridge_mhd_check_target(void *context, const char *uri, struct MHD_Connection *connection) {
    (void)context;
    (void)connection;
    for (const char *at = uri; *at != '\0' && *at != '?'; at++) {
        if (at[0] == '%' && at[1] == '0' && at[2] == '0') return &bridge_mhd_nul_in_path;
    }
    return NULL;
}

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
                            MHD_OPTION_URI_LOG_CALLBACK, bridge_mhd_check_target, NULL,
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

/* libmicrohttpd 0.9.75 hands over each field's name and value where it read them in its read buffer: the value
   follows the name, the NUL that replaced the colon, and the whitespace it skipped. For a folded line it copies the
   name elsewhere in the connection's memory pool (to glue the continuation onto it) and leaves the value where it
   was, so the value no longer follows the name. Only pointers are compared until they show the two are adjacent. */
static enum MHD_Result bridge_mhd_scan_field(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                                             const char *value, size_t value_size) {
    (void)kind;
    (void)value_size;
    int *folded = cls;
    if (key == NULL || value == NULL) return MHD_YES;
    uintptr_t name_end = (uintptr_t)key + key_size;
    uintptr_t start = (uintptr_t)value;
    if (start <= name_end || start - name_end > 256) {
        *folded = 1;
        return MHD_NO;
    }
    if (key[key_size] != '\0') {
        *folded = 1;
        return MHD_NO;
    }
    for (const char *at = key + key_size + 1; at < value; at++) {
        if (*at != ' ' && *at != '\t') {
            *folded = 1;
            return MHD_NO;
        }
    }
    return MHD_YES;
}

int bridge_mhd_has_folded_header(struct MHD_Connection *connection) {
    int folded = 0;
    MHD_get_connection_values_n(connection, MHD_HEADER_KIND, bridge_mhd_scan_field, &folded);
    return folded;
}

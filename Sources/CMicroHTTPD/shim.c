#include "CMicroHTTPD.h"
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

// Keeps the URL as received: decoding happens once, per segment, in Swift.
static size_t keep_url_encoded(void *cls, struct MHD_Connection *connection, char *url) {
    (void)cls;
    (void)connection;
    return strlen(url);
}

struct MHD_Daemon *CMicroHTTPD_start_daemon(const CMicroHTTPD_Settings *s,
                                            MHD_AccessHandlerCallback handler,
                                            MHD_RequestCompletedCallback completed,
                                            void *context) {
    struct MHD_OptionItem options[] = {
        {MHD_OPTION_SOCK_ADDR, 0, (void *)s->address},
        {MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)s->thread_pool_size, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)s->connection_timeout_seconds, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)s->connection_limit, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)s->connection_memory_limit, NULL},
        {MHD_OPTION_LISTEN_BACKLOG_SIZE, (intptr_t)s->listen_backlog, NULL},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, context},
        {MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)keep_url_encoded, NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)s->per_ip_connection_limit, NULL},
        // Last, so a NULL callback ends the list early instead of registering nothing.
        {s->notify_connection ? MHD_OPTION_NOTIFY_CONNECTION : MHD_OPTION_END, (intptr_t)s->notify_connection, context},
        {MHD_OPTION_END, 0, NULL},
    };
    uint16_t port = 0;
    if (s->address->sa_family == AF_INET6) {
        port = ntohs(((const struct sockaddr_in6 *)s->address)->sin6_port);
    } else {
        port = ntohs(((const struct sockaddr_in *)s->address)->sin_port);
    }
    unsigned int flags = s->flags;
    if (s->address->sa_family == AF_INET6) flags |= MHD_USE_IPv6;
    return MHD_start_daemon(flags, port, NULL, NULL, handler, context,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

uint16_t CMicroHTTPD_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

int CMicroHTTPD_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

void *CMicroHTTPD_connection_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

int CMicroHTTPD_listen_fd(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_LISTEN_FD);
    return info ? info->listen_fd : -1;
}

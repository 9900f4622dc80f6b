/*
 * auth-relay: an authenticating TCP pass-through for the SMTP benches.
 *
 *   auth-relay TARGET_PORT [AUTH_LINE]
 *
 * Postfix's smtp-source, the load generator of the relay and submission benches, cannot AUTH,
 * and mailsvc's submission port wants it. So smtp-source connects here instead: this relay
 * listens on 127.0.0.1 (a port the kernel picks, printed as "listening PORT"), opens a
 * connection to 127.0.0.1:TARGET_PORT for each client, passes the greeting and the client's
 * HELO/EHLO through, holds the EHLO reply back, sends AUTH_LINE (CRLF appended here) upstream,
 * and once that is answered 235 hands the held EHLO reply to the client and from then on copies
 * bytes both ways. smtp-source opens a new connection per message, thousands a run; written in C
 * on one epoll loop, the bench's own pass-through costs next to nothing beside the server it
 * measures. A refused AUTH is reported on stderr and closes that client only.
 *
 * Without AUTH_LINE it copies bytes both ways from the start: a server that wants no AUTH (Postfix
 * taking mail from loopback) can then be fed through the same hop as mailsvc, to see what the hop
 * alone costs a server (MAILSVC_BENCH_POSTFIX_HOP=1 of the relay bench).
 *
 * Build: cc -O2 -o auth-relay auth-relay.c (bench/lib/smtp.ts does it on first use). Linux only.
 */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* A byte buffer: bytes [off, len) are still to be used. */
struct buf {
    char *data;
    size_t off, len, cap;
};

/* Where the relay is in a session, as in the SMTP dialogue. */
enum phase { GREETING, HELO, AUTH, PIPE };

struct conn;

/* One socket of a session; `out` holds the bytes not yet written to it. */
struct side {
    int fd;
    uint32_t events; /* as last registered with epoll */
    struct conn *conn;
    struct buf out;
};

struct conn {
    struct side client, up;
    enum phase phase;
    int connected; /* upstream connect() completed */
    int dead;
    struct buf held;  /* client bytes received before AUTH succeeded */
    struct buf reply; /* upstream reply being gathered (helo and auth phases) */
    struct buf ehlo;  /* the EHLO reply, for the client once AUTH succeeded */
    struct conn *next_dead;
};

static int ep;
static struct sockaddr_in target;
static char *auth_line;
static size_t auth_len;
static struct conn *dead; /* closed during this epoll batch, freed after it */
static volatile sig_atomic_t stopping;
static char io[65536];
static int listener_tag; /* epoll data.ptr of the listening socket */

static int buf_append(struct buf *b, const char *p, size_t n)
{
    if (n == 0)
        return 0;
    if (b->off == b->len)
        b->off = b->len = 0;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d)
            return -1;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

static size_t pending(const struct buf *b) { return b->len - b->off; }

static void buf_free(struct buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

static void close_conn(struct conn *c)
{
    if (c->dead)
        return;
    c->dead = 1;
    close(c->client.fd);
    if (c->up.fd >= 0)
        close(c->up.fd);
    c->next_dead = dead;
    dead = c;
}

static void free_dead(void)
{
    while (dead) {
        struct conn *c = dead;
        dead = c->next_dead;
        buf_free(&c->client.out);
        buf_free(&c->up.out);
        buf_free(&c->held);
        buf_free(&c->reply);
        buf_free(&c->ehlo);
        free(c);
    }
}

/* Writes what `s` has pending; 0 when done or the socket is full, -1 on error. */
static int flush(struct side *s)
{
    struct buf *b = &s->out;
    while (pending(b) > 0) {
        ssize_t n = send(s->fd, b->data + b->off, pending(b), MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
        }
        b->off += (size_t)n;
    }
    b->off = b->len = 0;
    return 0;
}

/* Sends to `s`: straight away if nothing is queued (and it is connected), the rest queued. */
static int send_to(struct side *s, const char *p, size_t n)
{
    int ready = s != &s->conn->up || s->conn->connected;
    if (ready && pending(&s->out) == 0) {
        while (n > 0) {
            ssize_t w = send(s->fd, p, n, MSG_NOSIGNAL);
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                if (errno == EAGAIN || errno == EWOULDBLOCK)
                    break;
                return -1;
            }
            p += w;
            n -= (size_t)w;
        }
    }
    return n > 0 ? buf_append(&s->out, p, n) : 0;
}

/* Registers what each socket waits for: read one side only while nothing is queued for the
 * other (backpressure), wait for writability while something is queued for this one. */
static int set_events(struct side *s, uint32_t events)
{
    if (s->events == events)
        return 0;
    struct epoll_event ev = {.events = events, .data.ptr = s};
    if (epoll_ctl(ep, EPOLL_CTL_MOD, s->fd, &ev) < 0)
        return -1;
    s->events = events;
    return 0;
}

static int update(struct conn *c)
{
    uint32_t client = 0, up = 0;
    if (pending(&c->up.out) == 0)
        client |= EPOLLIN;
    if (pending(&c->client.out) > 0)
        client |= EPOLLOUT;
    if (!c->connected) {
        up = EPOLLOUT;
    } else {
        if (pending(&c->client.out) == 0)
            up |= EPOLLIN;
        if (pending(&c->up.out) > 0)
            up |= EPOLLOUT;
    }
    return set_events(&c->client, client) < 0 || set_events(&c->up, up) < 0 ? -1 : 0;
}

/* Whether `b` ends with a final reply line: "NNN text\r\n" (a space after the code), starting
 * the buffer or following a CRLF. */
static int final_line(const struct buf *b)
{
    const char *p = b->data + b->off;
    size_t n = pending(b);
    if (n < 6 || p[n - 2] != '\r' || p[n - 1] != '\n')
        return 0;
    size_t start = n - 2;
    while (start > 0 && p[start - 1] != '\r' && p[start - 1] != '\n')
        start--;
    if (start > 0 && (start < 2 || p[start - 1] != '\n' || p[start - 2] != '\r'))
        return 0;
    const char *l = p + start;
    return n - 2 - start >= 4 && l[0] >= '0' && l[0] <= '9' && l[1] >= '0' && l[1] <= '9' &&
           l[2] >= '0' && l[2] <= '9' && l[3] == ' ';
}

static int from_client(struct conn *c, const char *p, size_t n)
{
    if (c->phase == PIPE)
        return send_to(&c->up, p, n);
    if (c->phase == GREETING && n >= 5 && p[4] == ' ' &&
        (strncasecmp(p, "HELO", 4) == 0 || strncasecmp(p, "EHLO", 4) == 0)) {
        c->phase = HELO;
        return send_to(&c->up, p, n);
    }
    return buf_append(&c->held, p, n);
}

static int from_upstream(struct conn *c, const char *p, size_t n)
{
    if (c->phase == PIPE || c->phase == GREETING)
        return send_to(&c->client, p, n);
    if (buf_append(&c->reply, p, n) < 0)
        return -1;
    if (!final_line(&c->reply))
        return 0;
    if (c->phase == HELO) {
        c->ehlo = c->reply;
        memset(&c->reply, 0, sizeof c->reply);
        c->phase = AUTH;
        return send_to(&c->up, auth_line, auth_len);
    }
    const char *r = c->reply.data + c->reply.off;
    size_t rn = pending(&c->reply);
    if (rn < 3 || memcmp(r, "235", 3) != 0) {
        fprintf(stderr, "auth-relay: AUTH refused: %.*s\n", (int)(rn - 2), r);
        return -1;
    }
    c->phase = PIPE;
    if (send_to(&c->client, c->ehlo.data + c->ehlo.off, pending(&c->ehlo)) < 0)
        return -1;
    if (pending(&c->held) > 0 && send_to(&c->up, c->held.data + c->held.off, pending(&c->held)) < 0)
        return -1;
    buf_free(&c->ehlo);
    buf_free(&c->held);
    buf_free(&c->reply);
    return 0;
}

/* Reads once from `s` and passes the bytes on; EOF or an error ends the session. */
static int readable(struct side *s)
{
    ssize_t n = recv(s->fd, io, sizeof io, 0);
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
    if (n == 0)
        return -1;
    struct conn *c = s->conn;
    return s == &c->client ? from_client(c, io, (size_t)n) : from_upstream(c, io, (size_t)n);
}

static int writable(struct side *s)
{
    struct conn *c = s->conn;
    if (s == &c->up && !c->connected) {
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
            err = errno;
        if (err) {
            fprintf(stderr, "auth-relay: connect to 127.0.0.1:%d: %s\n", ntohs(target.sin_port), strerror(err));
            return -1;
        }
        c->connected = 1;
    }
    return flush(s);
}

static void nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int watch(struct side *s, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = s};
    s->events = events;
    return epoll_ctl(ep, EPOLL_CTL_ADD, s->fd, &ev);
}

/* A new client: connect upstream (non-blocking; done when it turns writable). */
static void accepted(int fd)
{
    struct conn *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        return;
    }
    c->client.fd = fd;
    c->client.conn = c;
    c->phase = auth_line ? GREETING : PIPE;
    c->up.conn = c;
    c->up.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    nodelay(fd);
    if (c->up.fd >= 0)
        nodelay(c->up.fd);
    if (c->up.fd < 0 ||
        (connect(c->up.fd, (struct sockaddr *)&target, sizeof target) < 0 && errno != EINPROGRESS)) {
        fprintf(stderr, "auth-relay: connect to 127.0.0.1:%d: %s\n", ntohs(target.sin_port), strerror(errno));
        close_conn(c);
        return;
    }
    if (watch(&c->client, EPOLLIN) < 0 || watch(&c->up, EPOLLOUT) < 0)
        close_conn(c);
}

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

int main(int argc, char **argv)
{
    char *end;
    long port = argc == 2 || argc == 3 ? strtol(argv[1], &end, 10) : 0;
    if (argc < 2 || argc > 3 || *end || port < 1 || port > 65535) {
        fprintf(stderr, "usage: auth-relay TARGET_PORT [AUTH_LINE]\n");
        return 2;
    }
    if (argc == 3) {
        auth_len = strlen(argv[2]) + 2;
        auth_line = malloc(auth_len + 1);
        if (!auth_line)
            return 1;
        snprintf(auth_line, auth_len + 1, "%s\r\n", argv[2]);
    }
    target.sin_family = AF_INET;
    target.sin_port = htons((uint16_t)port);
    target.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

    /* SIGTERM/SIGINT are blocked except inside epoll_pwait, so none is missed between checks. */
    sigset_t block, waiting;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigprocmask(SIG_BLOCK, &block, &waiting);
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* Gone with the bench that started it, even if that one dies without stopping it. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);

    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof addr;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(lfd, SOMAXCONN) < 0 ||
        getsockname(lfd, (struct sockaddr *)&addr, &alen) < 0) {
        perror("auth-relay: listen");
        return 1;
    }
    ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event lev = {.events = EPOLLIN, .data.ptr = &listener_tag};
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &lev) < 0) {
        perror("auth-relay: epoll");
        return 1;
    }
    printf("listening %d\n", ntohs(addr.sin_port));
    fflush(stdout);

    struct epoll_event events[64];
    while (!stopping) {
        int n = epoll_pwait(ep, events, 64, -1, &waiting);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            perror("auth-relay: epoll_wait");
            return 1;
        }
        for (int i = 0; i < n; i++) {
            if (events[i].data.ptr == &listener_tag) {
                for (;;) {
                    int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                    if (fd >= 0) {
                        accepted(fd);
                        continue;
                    }
                    if (errno != EINTR && errno != ECONNABORTED) {
                        if (errno != EAGAIN && errno != EWOULDBLOCK)
                            perror("auth-relay: accept");
                        break;
                    }
                }
                continue;
            }
            struct side *s = events[i].data.ptr;
            struct conn *c = s->conn;
            uint32_t ev = events[i].events;
            if (c->dead)
                continue;
            int failed = 0;
            if (s == &c->up && !c->connected)
                failed = writable(s) < 0; /* the connect completed or failed */
            else {
                if (ev & EPOLLOUT)
                    failed = writable(s) < 0;
                /* An error or hangup is read too: recv reports it (after any data still queued). */
                if (!failed && (ev & (EPOLLIN | EPOLLERR | EPOLLHUP)))
                    failed = readable(s) < 0;
            }
            if (failed || update(c) < 0)
                close_conn(c);
        }
        free_dead();
    }
    return 0;
}

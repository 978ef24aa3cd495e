/* front_fcgi — a FastCGI request's I/O over libfcgi (front_fcgi.h). */
#include "autoconf.h"

#include <errno.h>
#include <fastcgi.h>
#include <fcgiapp.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "front_fcgi.h"

void
fcgi_params_init(struct fcgi_params *fp, FCGX_Request *fr)
{
	fp->fr = fr;
	fp->n = -1;
}


static void
index_params(struct fcgi_params *fp)
{
	const char *eq;
	char **e = fp->fr->envp;
	size_t len[PARAMS_INDEXED];
	int i;

	for (fp->n = 0; e && e[fp->n] && fp->n < PARAMS_INDEXED; fp->n++) {
		eq = strchr(e[fp->n], '=');
		len[fp->n] = eq ? (size_t)(eq - e[fp->n]) : LEN_BUCKETS;	/* no '=': never found */
	}
	memset(fp->first, 0, sizeof(fp->first));
	for (i = fp->n - 1; i >= 0; i--)	/* backwards, so that each list is in order */
		if (len[i] < LEN_BUCKETS) {
			fp->next[i] = fp->first[len[i]];
			fp->first[len[i]] = (unsigned char)(i + 1);
		}
}

/* The index of the next param named name (nlen bytes) after index i (-1: the first), or
 * -1. */
static long
next_named(const struct fcgi_params *fp, const char *name, size_t nlen, long i)
{
	char **e = fp->fr->envp;

	if (e == NULL)
		return -1;
	if (nlen < LEN_BUCKETS && i < fp->n) {	/* the indexed params of that length */
		for (i = i < 0 ? fp->first[nlen] - 1 : fp->next[i] - 1; i >= 0; i = fp->next[i] - 1)
			if (memcmp(e[i], name, nlen) == 0)
				return i;
		i = fp->n - 1;	/* then those past them */
	}
	for (i++; e[i]; i++)	/* a long name is looked for in every param */
		if (strncmp(e[i], name, nlen) == 0 && e[i][nlen] == '=')
			return i;
	return -1;
}

const char *
fcgi_param(void *ctx, const char *name)
{
	struct fcgi_params *fp = ctx;
	size_t nlen = strlen(name), used = 0, vlen;
	const char *first = NULL, *v;
	long i;
	int n = 0;

	if (fp->n < 0)
		index_params(fp);
	for (i = next_named(fp, name, nlen, -1); i >= 0; i = next_named(fp, name, nlen, i)) {
		v = fp->fr->envp[i] + nlen + 1;
		if (n++ == 0) {
			first = v;
			continue;
		}
		if (n == 2) {
			used = strlen(first);
			if (used >= sizeof(fp->joined))
				return "";	/* too long to join: refuse rather than pick one */
			memcpy(fp->joined, first, used + 1);
		}
		vlen = strlen(v);
		if (used + 2 + vlen >= sizeof(fp->joined))
			return "";
		memcpy(fp->joined + used, ", ", 2);
		memcpy(fp->joined + used + 2, v, vlen + 1);
		used += 2 + vlen;
	}
	return n > 1 ? fp->joined : first;
}

/* The large parts of an answer (a cached list page) go out in FastCGI records of up to
 * RECORD_MAX bytes written straight to the connection, rather than through libfcgi's
 * 8 KiB stream buffer, which copies them and writes a record of 8 KiB at a time: what
 * the stream holds is flushed first, so the bytes keep their order, and libfcgi ends the
 * stream as usual. libfcgi has no call that writes a record of a caller's size, so the
 * record is made here from what <fcgiapp.h> makes public of a request (its connection,
 * ipcFd, and its requestId) and <fastcgi.h>'s record layout: no field private to
 * libfcgi is touched. */
#define DIRECT_MIN	(16 * 1024)
#define RECORD_MAX	65528	/* a record's content: at most 65535 bytes (8-aligned here) */

static int
fcgi_records(FCGX_Request *fr, const char *p, size_t n)
{
	unsigned char head[FCGI_HEADER_LEN];
	struct iovec iov[2];
	size_t k, off;
	ssize_t w;

	while (n > 0) {
		k = n < RECORD_MAX ? n : RECORD_MAX;
		head[0] = FCGI_VERSION_1;
		head[1] = FCGI_STDOUT;
		head[2] = (unsigned char)((fr->requestId >> 8) & 0xff);
		head[3] = (unsigned char)(fr->requestId & 0xff);
		head[4] = (unsigned char)((k >> 8) & 0xff);
		head[5] = (unsigned char)(k & 0xff);
		head[6] = 0;	/* no padding */
		head[7] = 0;
		for (off = 0; off < sizeof(head) + k; off += (size_t)w) {
			/* what is left of the header, then of the content */
			iov[0].iov_base = head + (off < sizeof(head) ? off : sizeof(head));
			iov[0].iov_len = off < sizeof(head) ? sizeof(head) - off : 0;
			iov[1].iov_base = (void *)(uintptr_t)(p + (off > sizeof(head) ? off - sizeof(head) : 0));
			iov[1].iov_len = k - (off > sizeof(head) ? off - sizeof(head) : 0);
			if ((w = writev(fr->ipcFd, iov, 2)) < 0 && errno == EINTR)
				w = 0;
			else if (w <= 0)
				return -1;
		}
		p += k;
		n -= k;
	}
	return 0;
}

static int
fcgi_write(void *ctx, const void *p, size_t n)
{
	FCGX_Request *fr = ctx;

	if (n < DIRECT_MIN || fr->ipcFd < 0)
		return FCGX_PutStr(p, (int)n, fr->out) == (int)n ? 0 : -1;
	return FCGX_FFlush(fr->out) < 0 ? -1 : fcgi_records(fr, p, n);
}

static int
fcgi_flush(void *ctx)
{
	return FCGX_FFlush(((FCGX_Request *)ctx)->out) < 0 ? -1 : 0;
}



static long
copy_read(void *ctx, void *p, size_t n)
{
	struct body_copy *bc = ctx;

	if (bc->off == bc->b.len)
		return bc->failed ? -1 : 0;
	if (n > bc->b.len - bc->off)
		n = bc->b.len - bc->off;
	memcpy(p, bc->b.data + bc->off, n);
	bc->off += n;
	return (long)n;
}

int
fcgi_body_read(FCGX_Stream *in, const struct request *req, long max, struct body_copy *bc)
{
	char chunk[16384];
	long long cap;
	int k;

	memset(bc, 0, sizeof(*bc));
	if (req->content_length == -2 || req->content_length > max)
		return 0;
	cap = req->content_length >= 0 ? req->content_length + 1 : (long long)max + 1;
	buf_init(&bc->b, (size_t)cap);
	while ((long long)bc->b.len < cap) {
		k = FCGX_GetStr(chunk, (int)(cap - (long long)bc->b.len < (long long)sizeof(chunk) ?
		    cap - (long long)bc->b.len : (long long)sizeof(chunk)), in);
		if (k <= 0) {
			bc->failed = FCGX_GetError(in) != 0;
			break;
		}
		if (buf_append(&bc->b, chunk, (size_t)k) < 0) {
			bc->failed = 1;
			break;
		}
	}
	return bc->failed ? -1 : 0;
}


void
fcgi_body_source(struct body_copy *bc, struct source *src)
{
	src->read = copy_read;
	src->ctx = bc;
}

void
fcgi_sink_init(struct sink *out, FCGX_Request *fr)
{
	memset(out, 0, sizeof(*out));
	out->write = fcgi_write;
	out->flush = fcgi_flush;
	out->ctx = fr;
	out->watch_fd = fr->ipcFd;
	out->watch_events = POLLRDHUP;
}

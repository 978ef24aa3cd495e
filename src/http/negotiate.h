/* negotiate — what a request's headers ask of the answer, read on their own: the media
 * type of the body, the framings an Accept header admits, and the value of a header
 * that repeats a body field (Mcp-Method, Mcp-Name, MCP-Protocol-Version: blanks
 * trimmed, =?base64?…?= decoded). Pure. */
#ifndef GW_NEGOTIATE_H
#define GW_NEGOTIATE_H

#include <stddef.h>

#define NEGOTIATE_HEADER_MAX	512	/* a decoded Mcp-Method or Mcp-Name value */

/* The members of a 2026-07-28 request's params._meta that the revision defines. */
#define MCP_META_VERSION	"io.modelcontextprotocol/protocolVersion"
#define MCP_META_CAPS		"io.modelcontextprotocol/clientCapabilities"
#define MCP_META_INFO		"io.modelcontextprotocol/clientInfo"
#define MCP_META_LOG_LEVEL	"io.modelcontextprotocol/logLevel"

enum { NEGOTIATE_JSON = 1 << 0, NEGOTIATE_SSE = 1 << 1 };

/* 1 when the Content-Type ct is the media type want (parameters ignored). */
int negotiate_media_type_is(const char *ct, const char *want);
/* Which of our two framings (NEGOTIATE_JSON, NEGOTIATE_SSE) an Accept header admits:
 * media ranges, q=0 excludes; a missing or empty header admits both. */
unsigned negotiate_accept(const char *accept);
/* A header value as the body would hold it: optional whitespace trimmed (RFC 9110
 * §5.5), and =?base64?…?= decoded, into out (NUL-terminated). -1 when the encoding is
 * broken, the value holds a NUL, or it does not fit. */
int negotiate_header_value(const char *raw, char *out, size_t outlen);
/* Does header (raw) carry exactly want? A missing header never does. */
int negotiate_header_matches(const char *raw, const char *want);
/* The other way: value as a header carries it (as it is when it is visible ASCII with
 * no blank at either end and does not begin as an encoded one, else =?base64?…?=),
 * into out (NUL-terminated). -1 when it does not fit. */
int negotiate_header_encode(const char *value, char *out, size_t outlen);

#endif

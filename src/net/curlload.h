/* curlload — libcurl, loaded when a request first needs the network (curlload.c). */
#ifndef GW_CURLLOAD_H
#define GW_CURLLOAD_H

/* Sets what libcurl's libraries read from the environment when loaded: once, before
 * any thread starts (setenv(3) is not thread-safe). */
void curlload_env(void);

#endif

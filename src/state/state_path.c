/* state_path — where the state file goes when the configuration names none: a
 * directory only this user may write (state.h, state_default_path). */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state.h"

/* dir is ours, a real directory, and nobody else may write in it (made 0700 when
 * create and missing). A missing one is fine without create. */
static int
private_dir(const char *dir, int create, struct gw_error *err)
{
	struct stat sb;
	int rc = lstat(dir, &sb);

	if (rc < 0 && errno == ENOENT && create) {
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			gw_error_set(err, GW_EINTERNAL, "state: cannot make %s: %s", dir, strerror(errno));
			return -1;
		}
		rc = lstat(dir, &sb);
	}
	if (rc < 0) {
		if (!create && errno == ENOENT)
			return 0;
		gw_error_set(err, GW_EINTERNAL, "state: %s: %s", dir, strerror(errno));
		return -1;
	}
	if (S_ISLNK(sb.st_mode) || !S_ISDIR(sb.st_mode))
		gw_error_set(err, GW_EINTERNAL, "state: %s is %s, not a directory", dir,
		    S_ISLNK(sb.st_mode) ? "a symlink" : "another kind of file");
	else if (sb.st_uid != geteuid())
		gw_error_set(err, GW_EINTERNAL, "state: %s belongs to uid %ld, not to this user (uid %ld)",
		    dir, (long)sb.st_uid, (long)geteuid());
	else if (sb.st_mode & 022)
		gw_error_set(err, GW_EINTERNAL, "state: %s is writable by other users (mode %03o)", dir,
		    (unsigned)(sb.st_mode & 0777));
	else
		return 0;
	return -1;
}

int
state_default_path(char *out, size_t n, int create, struct gw_error *err)
{
	const char *rd = getenv("RUNTIME_DIRECTORY"), *xdg = getenv("XDG_RUNTIME_DIR");
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	struct stat sb;
	int len;

	if (rd && *rd == '/')	/* systemd separates several directories with ':' */
		len = snprintf(dir, sizeof(dir), "%.*s", (int)strcspn(rd, ":"), rd);
	else if (geteuid() == 0 || (lstat("/run/mcpgate", &sb) == 0 && S_ISDIR(sb.st_mode) &&
	    sb.st_uid == geteuid()))
		len = snprintf(dir, sizeof(dir), "/run/mcpgate");
	else if (xdg && *xdg == '/')
		len = snprintf(dir, sizeof(dir), "%s/mcpgate", xdg);
	else
		len = snprintf(dir, sizeof(dir), "%s/mcpgate-%ld", tmp && *tmp == '/' ? tmp : "/tmp",
		    (long)geteuid());
	if (len < 0 || (size_t)len >= sizeof(dir) || (size_t)len + sizeof("/state") > n) {
		gw_error_set(err, GW_EINTERNAL, "state: default path too long");
		return -1;
	}
	if (private_dir(dir, create, err) < 0)
		return -1;
	snprintf(out, n, "%s/state", dir);
	return 0;
}

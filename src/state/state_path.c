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

/* Whether the owner of a directory (or of a symlink to one) may be trusted: this user,
 * or root when the configuration names the directory (root made it for us). */
static int
trusted_owner(const struct stat *sb, int named)
{
	return sb->st_uid == geteuid() || (named && sb->st_uid == 0);
}

/* dir is a real directory whose owner we trust (trusted_owner) and that nobody else may
 * write in, made 0700 when create and missing (only dir itself: a missing parent is an
 * error). A symlink there is followed only when the configuration names it and its
 * owner is trusted (whoever owns a link chose where it points), the directory it names
 * judged the same; the default directory is never a symlink (in /tmp, one could be
 * anybody's). A missing one is fine without create. */
static int
private_dir(const char *dir, int create, int named, struct gw_error *err)
{
	struct stat sb;
	int rc = lstat(dir, &sb);

	if (rc < 0 && errno == ENOENT && create) {
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			gw_error_set(err, GW_EINTERNAL, "state: cannot make %s: %s", dir, strerror(errno));
			return -1;
		}
		rc = lstat(dir, &sb);	/* EEXIST: another process (or user) was first; judged below */
	}
	if (rc == 0 && S_ISLNK(sb.st_mode) && named && trusted_owner(&sb, named))
		rc = stat(dir, &sb);
	else if (rc == 0 && S_ISLNK(sb.st_mode)) {
		gw_error_set(err, GW_EINTERNAL, "state: %s is a symlink%s", dir,
		    named ? " that is neither this user's nor root's" : " (the default directory is never one)");
		return -1;
	}
	if (rc < 0) {
		if (!create && errno == ENOENT)
			return 0;
		gw_error_set(err, GW_EINTERNAL, "state: %s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(sb.st_mode))
		gw_error_set(err, GW_EINTERNAL, "state: %s is not a directory", dir);
	else if (!trusted_owner(&sb, named))
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
state_file_dir(const char *file, int named, struct gw_error *err)
{
	char dir[4096];
	const char *slash = strrchr(file, '/');
	size_t n = slash ? (size_t)(slash - file) : 0;

	if (slash == NULL)
		return private_dir(".", 0, named, err);	/* relative to where it runs: not ours to make */
	if (n == 0)
		n = 1;	/* a file in / */
	if (n >= sizeof(dir)) {
		gw_error_set(err, GW_EINTERNAL, "state: %s: path too long", file);
		return -1;
	}
	memcpy(dir, file, n);
	dir[n] = '\0';
	return private_dir(dir, 1, named, err);
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
	if (private_dir(dir, create, 0, err) < 0)
		return -1;
	snprintf(out, n, "%s/state", dir);
	return 0;
}

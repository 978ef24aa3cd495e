/* pins_file — the pins file on disk: read as the configuration's files are (cfgfile.h),
 * written atomically, changed under a lock (pins.h). */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfgfile.h"
#include "pins.h"

int
pins_load(const char *path, struct pins **out, struct gw_error *err)
{
	struct gw_error why;
	struct stat st;
	char *text = NULL;
	size_t len;
	int fd, rc = -1;

	*out = NULL;
	if (stat(path, &st) < 0 && errno == ENOENT) {
		if ((*out = pins_new()) != NULL)
			return 0;
		gw_error_set(err, GW_EINTERNAL, "out of memory");
		return -1;
	}
	if ((fd = cfgfile_open(path, &st, &why)) < 0) {
		gw_error_set(err, why.code, "%s: %s", path, why.detail);
		return -1;
	}
	/* What it holds decides which definitions are served: a file another may write is
	 * refused, as a configuration file is. */
	if (cfgfile_judge(&st, CFGFILE_TRUSTED, &why) < 0 || cfgfile_read_all(fd, PINS_FILE_MAX, &text, &len, &why) != 0) {
		gw_error_set(err, why.code, "%s: %s", path, why.detail);
		goto out;
	}
	rc = pins_parse(text, len, path, out, err);
out:
	free(text);
	close(fd);
	return rc;
}

/* The directory path is in, into dir (PATH_MAX bytes): 0, or -1 when too long. */
static int
dir_of(const char *path, char *dir)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash == NULL ? 1 : slash == path ? 1 : (size_t)(slash - path);

	if (n >= PATH_MAX)
		return -1;
	memcpy(dir, slash == NULL ? "." : path, n);
	dir[n] = '\0';
	return 0;
}

/* All of n bytes at p to fd: 0, or -1 with errno. */
static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, p, n)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A rename is durable once the directory that holds the name is synced. */
static int
sync_dir(const char *path)
{
	char dir[PATH_MAX];
	int fd, rc;

	if (dir_of(path, dir) < 0 || (fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* One step after another, the first that fails named in the error; the temporary file
 * removed then. */
int
pins_save(const struct pins *p, const char *path, struct gw_error *err)
{
	char tmp[PATH_MAX];
	const char *step = NULL;
	mode_t mode = 0644;
	struct stat st;
	struct buf b;
	int fd = -1;

	buf_init(&b, PINS_FILE_MAX);
	if (pins_format(p, &b) < 0) {
		gw_error_set(err, GW_ECONFIG, "%s: the pins would be over %u bytes", path, PINS_FILE_MAX);
		buf_free(&b);
		return -1;
	}
	if (stat(path, &st) == 0)
		mode = st.st_mode & 07777;
	else if (errno != ENOENT)
		step = "stat";
	if (step == NULL && snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		step = "the temporary file's name";
	}
	if (step == NULL && (fd = mkostemp(tmp, O_CLOEXEC)) < 0)
		step = "the temporary file";
	else if (step == NULL && fchmod(fd, mode) < 0)
		step = "chmod";
	else if (step == NULL && write_all(fd, buf_str(&b), b.len) < 0)
		step = "write";
	else if (step == NULL && fsync(fd) < 0)
		step = "fsync";
	if (fd >= 0 && close(fd) < 0 && step == NULL)
		step = "close";
	if (step == NULL && rename(tmp, path) < 0)
		step = "rename";
	else if (step == NULL && sync_dir(path) < 0)
		step = "fsync of the directory";
	if (step != NULL) {
		gw_error_set(err, GW_ECONFIG, "%s: %s: %s", path, step, strerror(errno));
		if (fd >= 0)
			unlink(tmp);
	}
	buf_free(&b);
	return step ? -1 : 0;
}

int
pins_update(const char *path, pins_change_fn fn, void *arg, struct gw_error *err)
{
	struct pins *p = NULL;
	char lock[PATH_MAX];
	int fd, rc = -1;

	if (snprintf(lock, sizeof(lock), "%s.lock", path) >= (int)sizeof(lock)) {
		gw_error_set(err, GW_ECONFIG, "%s: the name is too long", path);
		return -1;
	}
	/* Read-only is enough for flock(2): whoever may read the pins may wait their turn. */
	if ((fd = open(lock, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644)) < 0) {
		gw_error_set(err, GW_ECONFIG, "%s: %s", lock, strerror(errno));
		return -1;
	}
	while ((rc = flock(fd, LOCK_EX)) < 0 && errno == EINTR)
		;
	if (rc < 0) {
		gw_error_set(err, GW_ECONFIG, "%s: flock: %s", lock, strerror(errno));
		goto out;
	}
	rc = -1;
	if (pins_load(path, &p, err) < 0)
		goto out;
	rc = fn(p, arg, err);
	if (rc == 0 && pins_save(p, path, err) < 0)
		rc = -1;
out:
	pins_free(p);
	close(fd);	/* and the lock with it */
	return rc;
}

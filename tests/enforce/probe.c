/* cf-probe: try file operations and print, per operation, the errno name.
 *
 *   cf-probe OP:PATH[:PATH2] ...
 *
 * OP is read (open O_RDONLY and print the content), list (open the directory and
 * print the names), write (open O_WRONLY|O_APPEND, no create), create (O_CREAT|O_EXCL,
 * writes "x"), opath (O_PATH, then reopen /proc/self/fd/N for reading and print
 * the content), link (hard link PATH to PATH2), handle (PATH2 a directory:
 * name_to_handle_at of PATH, then open_by_handle_at of that handle with
 * PATH2 opened as the mount descriptor, and print the content), byhandle
 * (PATH is TYPE/HEX, a handle made outside, opened through PATH2 the same
 * way; reported as "byhandle PATH2: ..."). Each prints
 * "OP PATH: OK" or "OP PATH: ENAME"; read content follows on the next
 * lines, so a leak shows. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *name(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "E?";
}

static void dump(int fd)
{
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
}

static void report(const char *op, const char *path, int err)
{
	printf("%s %s: %s\n", op, path, err ? name(err) : "OK");
	fflush(stdout);
}

/* open_by_handle_at of H through a descriptor of the directory MOUNT,
 * reported as OP SHOWN, the content printed when it opens. */
static void by_handle(const char *op, const char *shown, struct file_handle *h, const char *mount)
{
	int m = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (m < 0) {
		report("handle-mount", mount, errno);
		return;
	}
	int fd = open_by_handle_at(m, h, O_RDONLY | O_CLOEXEC);
	report(op, shown, fd < 0 ? errno : 0);
	if (fd >= 0) {
		dump(fd);
		close(fd);
	}
	close(m);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: cf-probe OP:PATH[:PATH2] ...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		char op[16], path[4096], path2[4096] = "";
		const char *c = strchr(argv[i], ':');
		if (!c || (size_t)(c - argv[i]) >= sizeof op) {
			fprintf(stderr, "cf-probe: bad operand %s\n", argv[i]);
			return 2;
		}
		snprintf(op, sizeof op, "%.*s", (int)(c - argv[i]), argv[i]);
		snprintf(path, sizeof path, "%s", c + 1);
		if (strcmp(op, "link") == 0 || strcmp(op, "handle") == 0 ||
		    strcmp(op, "byhandle") == 0) {
			char *d = strchr(path, ':');
			if (!d)
				return 2;
			*d = '\0';
			snprintf(path2, sizeof path2, "%s", d + 1);
		}
		int fd = -1, err = 0;
		if (strcmp(op, "read") == 0) {
			fd = open(path, O_RDONLY | O_CLOEXEC);
			err = fd < 0 ? errno : 0;
			report(op, path, err);
			if (fd >= 0)
				dump(fd);
		} else if (strcmp(op, "list") == 0) {
			DIR *d = opendir(path);
			report(op, path, d ? 0 : errno);
			struct dirent *e;
			while (d && (e = readdir(d)))
				printf("  %s\n", e->d_name);
			if (d)
				closedir(d);
		} else if (strcmp(op, "write") == 0) {
			fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
			report(op, path, fd < 0 ? errno : 0);
		} else if (strcmp(op, "create") == 0) {
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
			report(op, path, fd < 0 ? errno : 0);
			if (fd >= 0 && write(fd, "x", 1) != 1)
				perror("write");
		} else if (strcmp(op, "opath") == 0) {
			int p = open(path, O_PATH | O_CLOEXEC);
			if (p < 0) {
				report("opath-open", path, errno);
				continue;
			}
			char proc[64];
			snprintf(proc, sizeof proc, "/proc/self/fd/%d", p);
			fd = open(proc, O_RDONLY | O_CLOEXEC);
			report(op, path, fd < 0 ? errno : 0);
			if (fd >= 0)
				dump(fd);
			close(p);
		} else if (strcmp(op, "link") == 0) {
			report(op, path, link(path, path2) ? errno : 0);
		} else if (strcmp(op, "handle") == 0) {
			struct file_handle *h = calloc(1, sizeof *h + MAX_HANDLE_SZ);
			int mount_id;
			if (!h)
				return 2;
			h->handle_bytes = MAX_HANDLE_SZ;
			if (name_to_handle_at(AT_FDCWD, path, h, &mount_id, 0))
				report("handle-name", path, errno);
			else
				by_handle(op, path, h, path2);
			free(h);
		} else if (strcmp(op, "byhandle") == 0) {
			struct file_handle *h = calloc(1, sizeof *h + MAX_HANDLE_SZ);
			char *hex = strchr(path, '/');
			if (!h || !hex)
				return 2;
			h->handle_type = atoi(path);
			for (hex++; hex[0] && hex[1] && h->handle_bytes < MAX_HANDLE_SZ; hex += 2) {
				unsigned v;
				if (sscanf(hex, "%2x", &v) != 1)
					return 2;
				h->f_handle[h->handle_bytes++] = (unsigned char)v;
			}
			by_handle(op, path2, h, path2);
			free(h);
		} else {
			fprintf(stderr, "cf-probe: unknown op %s\n", op);
			return 2;
		}
		if (fd >= 0)
			close(fd);
	}
	return 0;
}

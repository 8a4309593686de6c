/* SPDX-License-Identifier: MIT */
/*
 * elf-events.c - read the "tk_meta" sections of a program and its libraries
 * from their ELF files, without running anything.
 *
 * One file is read with libelf in three steps:
 *
 *   section headers --> "tk_meta" (SHT_PROGBITS) --> copy of its raw bytes
 *                   --> SHT_DYNAMIC --> DT_NEEDED, DT_RPATH, DT_RUNPATH,
 *                                       DT_SONAME, DT_FLAGS_1 (NODEFLIB)
 *
 * The descriptors' event pointer is relocated when the object is loaded;
 * nothing here needs it, so the bytes are copied as they are in the file.
 *
 * With the needed libraries, the objects are visited breadth first, as the
 * dynamic loader maps them, and each DT_NEEDED name is resolved the way
 * ld.so does (minus /etc/ld.so.cache and the hwcaps subdirectories):
 *
 *   1. a name holding a '/' is a path, taken as it is;
 *   2. a name already loaded (as a DT_NEEDED name or a DT_SONAME) is not
 *      searched again;
 *   3. unless the requesting object has DT_RUNPATH: the DT_RPATH of the
 *      requesting object, then of the object that first needed it, and so
 *      on up to the program (each only if it has no DT_RUNPATH itself);
 *   4. LD_LIBRARY_PATH;
 *   5. the DT_RUNPATH of the requesting object;
 *   6. unless the requesting object has DF_1_NODEFLIB: the default
 *      directories, multiarch first.
 *
 * $ORIGIN and ${ORIGIN} in a search path stand for the directory of the
 * object that holds the path (for the program, after resolving symbolic
 * links, as the kernel gives ld.so the program's real path); an entry
 * using $LIB or $PLATFORM is dropped.  A candidate is taken only if it is
 * a regular ELF file of the program's class, byte order and machine, and
 * can be read; otherwise the search goes on.  A file (by its real path) is
 * read once; libraries not found are left out, silently.  The list stops
 * at EE_MAX_MODULES files.
 *
 * Errors are those of the program's file only: not an ELF file, section
 * headers or tk_meta outside the file, a compressed tk_meta (-ENOTSUP,
 * which no linker makes), and running out of memory.  A file without
 * section headers has no events and no needed libraries.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strchrnul, asprintf, strndup */
#endif
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf-events.h"

#define EE_SECTION "tk_meta"
#define EE_MAX_MODULES 256
#define EE_TRACEKIT_LIB "libtracekit.so"
#define EE_MIN_SIZE ((off_t)sizeof(Elf32_Ehdr))

/* A list of strings, each malloc'd. */
struct ee_strv {
	char **v;
	size_t n;
	size_t cap;
};

/* One ELF file read. */
struct ee_obj {
	char *path;      /* as given or found */
	char *real;      /* realpath(path), to read each file once */
	char *origin;    /* what $ORIGIN expands to in its search paths */
	char *loaded_as; /* the DT_NEEDED name it was found for */
	char *soname;
	struct ee_strv needed;
	struct ee_strv rpath;   /* expanded directories */
	struct ee_strv runpath; /* expanded directories */
	bool has_runpath;
	bool nodeflib;
	int parent; /* the object that first needed it; -1 for the program */
	void *meta;
	size_t size;
	bool links_tracekit;
};

/* What the program is: every library must match it. */
struct ee_ident {
	unsigned char class;
	unsigned char data;
	unsigned machine;
};

struct ee_ctx {
	struct ee_obj *obj;
	unsigned count;
	unsigned cap;
	struct ee_ident ident;
	struct ee_strv llp;      /* LD_LIBRARY_PATH, expanded */
	struct ee_strv defaults; /* the default directories */
	char *err;
	size_t errlen;
};

/* Outcome of trying one candidate path. */
enum ee_try {
	EE_NOT_HERE, /* absent, unreadable, or not a matching ELF file */
	EE_KNOWN,    /* the file has been read already */
	EE_NEW,      /* read, appended to the context */
};

static const char *const ee_default_dirs[] = {
	"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
};

/* The Debian multiarch directory name for a machine, if we know it. */
static const char *ee_multiarch(const struct ee_ident *id)
{
	switch (id->machine) {
	case EM_X86_64:
		return id->class == ELFCLASS64 ? "x86_64-linux-gnu" : NULL;
	case EM_386:
		return "i386-linux-gnu";
	case EM_AARCH64:
		return "aarch64-linux-gnu";
	case EM_RISCV:
		return id->class == ELFCLASS64 ? "riscv64-linux-gnu" : NULL;
	default:
		return NULL;
	}
}

static void ee_strv_free(struct ee_strv *sv)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}

/* Append @s (taken over, freed on failure). */
static int ee_strv_take(struct ee_strv *sv, char *s)
{
	char **v;
	size_t cap;

	if (!s)
		return -ENOMEM;
	if (sv->n == sv->cap) {
		cap = sv->cap ? sv->cap * 2 : 4;
		v = realloc(sv->v, cap * sizeof(*v));
		if (!v) {
			free(s);
			return -ENOMEM;
		}
		sv->v = v;
		sv->cap = cap;
	}
	sv->v[sv->n++] = s;
	return 0;
}

static void ee_obj_free(struct ee_obj *o)
{
	free(o->path);
	free(o->real);
	free(o->origin);
	free(o->loaded_as);
	free(o->soname);
	ee_strv_free(&o->needed);
	ee_strv_free(&o->rpath);
	ee_strv_free(&o->runpath);
	free(o->meta);
	memset(o, 0, sizeof(*o));
}

/* The directory part of @path: "." if it has none, "/" for "/x". */
static char *ee_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

static char *ee_join(const char *dir, const char *name)
{
	size_t n = strlen(dir);
	char *s;

	if (asprintf(&s, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/",
		     name) < 0)
		return NULL;
	return s;
}

/* Length of the dynamic string token at @p (just after a '$'), 0 if none. */
static size_t ee_dst_len(const char *p, const char *token)
{
	size_t n = strlen(token);

	if (p[0] == '{')
		return strncmp(p + 1, token, n) == 0 && p[n + 1] == '}' ?
			       n + 2 : 0;
	if (strncmp(p, token, n) == 0 && (p[n] == '\0' || p[n] == '/'))
		return n;
	return 0;
}

/*
 * Expand $ORIGIN and ${ORIGIN} in @entry (of @len bytes) into *out.
 * *out is NULL if the entry is to be dropped.  Any other '$' is literal.
 */
static int ee_expand(const char *entry, size_t len, const char *origin,
		     char **out)
{
	size_t olen = strlen(origin), n = 0, cap, k;
	char *s, *copy;
	const char *p;

	*out = NULL;
	copy = strndup(entry, len);
	if (!copy)
		return -ENOMEM;
	/* Each '$' may grow by the origin's length at most. */
	cap = len + 1;
	for (p = copy; (p = strchr(p, '$')); p++)
		cap += olen;
	s = malloc(cap);
	if (!s) {
		free(copy);
		return -ENOMEM;
	}
	for (p = copy; *p;) {
		if (*p != '$') {
			s[n++] = *p++;
			continue;
		}
		if ((k = ee_dst_len(p + 1, "ORIGIN"))) {
			memcpy(s + n, origin, olen);
			n += olen;
			p += 1 + k;
		} else if (ee_dst_len(p + 1, "LIB") ||
			   ee_dst_len(p + 1, "PLATFORM")) {
			goto drop;
		} else {
			s[n++] = *p++;
		}
	}
	s[n] = '\0';
	*out = s;
	free(copy);
	return 0;
drop:
	free(s);
	free(copy);
	return 0;
}

/*
 * Split the search path @list on ':' and append its expanded entries to
 * @sv.  Empty entries are dropped, or taken as "." if @empty_is_cwd (as
 * LD_LIBRARY_PATH has them).
 */
static int ee_add_path(struct ee_strv *sv, const char *list,
		       const char *origin, bool empty_is_cwd)
{
	const char *p = list, *end;
	char *dir;
	int ret;

	for (;;) {
		end = strchrnul(p, ':');
		if (end == p) {
			if (empty_is_cwd) {
				ret = ee_strv_take(sv, strdup("."));
				if (ret)
					return ret;
			}
		} else {
			ret = ee_expand(p, (size_t)(end - p), origin, &dir);
			if (ret)
				return ret;
			if (dir) {
				ret = ee_strv_take(sv, dir);
				if (ret)
					return ret;
			}
		}
		if (!*end)
			return 0;
		p = end + 1;
	}
}

static int ee_fail(struct ee_ctx *c, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int ee_fail(struct ee_ctx *c, int ret, const char *fmt, ...)
{
	va_list ap;

	if (c->err && c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* libelf's reason for its last failure. */
static const char *ee_elf_why(void)
{
	const char *why = elf_errmsg(-1);

	return why ? why : "damaged ELF file";
}

static int ee_damaged(struct ee_ctx *c, const char *path, const char *why)
{
	return ee_fail(c, -EINVAL, "cannot read '%s': %s", path, why);
}

/* Whether the bytes of section @sh lie inside a file of @fsize bytes. */
static bool ee_in_file(const GElf_Shdr *sh, uint64_t fsize)
{
	if (sh->sh_type == SHT_NOBITS)
		return true;
	return sh->sh_offset <= fsize && sh->sh_size <= fsize - sh->sh_offset;
}

/* Copy the bytes of the tk_meta section @scn into @o. */
static int ee_read_meta(struct ee_ctx *c, struct ee_obj *o, Elf_Scn *scn,
			const GElf_Shdr *sh)
{
	Elf_Data *d = NULL;
	size_t size = sh->sh_size;

	if (sh->sh_flags & SHF_COMPRESSED)
		return ee_fail(c, -ENOTSUP,
			       "cannot read '%s': section '%s' is compressed",
			       o->path, EE_SECTION);
	if (size == 0)
		return 0;
	o->meta = calloc(1, size);
	if (!o->meta)
		return ee_fail(c, -ENOMEM, "cannot read '%s': %s", o->path,
			       strerror(ENOMEM));
	o->size = size;
	elf_errno(); /* clear, so a NULL below tells an error from the end */
	while ((d = elf_getdata(scn, d))) {
		if (!d->d_size)
			continue;
		if (!d->d_buf || d->d_off < 0 || (uint64_t)d->d_off > size ||
		    d->d_size > size - (uint64_t)d->d_off)
			return ee_damaged(c, o->path,
					  "bad data in section '" EE_SECTION
					  "'");
		memcpy((char *)o->meta + d->d_off, d->d_buf, d->d_size);
	}
	if (elf_errno())
		return ee_damaged(c, o->path, ee_elf_why());
	return 0;
}

/* Read the dynamic section @scn of @o. */
static int ee_read_dynamic(struct ee_ctx *c, struct ee_obj *o, Elf *elf,
			   Elf_Scn *scn, const GElf_Shdr *sh)
{
	const char *rpath = NULL, *runpath = NULL, *s;
	Elf_Data *d;
	GElf_Dyn dyn;
	int i, ret;

	d = elf_getdata(scn, NULL);
	if (!d)
		return ee_damaged(c, o->path, ee_elf_why());
	for (i = 0; gelf_getdyn(d, i, &dyn); i++) {
		if (dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag == DT_FLAGS_1) {
			if (dyn.d_un.d_val & DF_1_NODEFLIB)
				o->nodeflib = true;
			continue;
		}
		if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH &&
		    dyn.d_tag != DT_RUNPATH && dyn.d_tag != DT_SONAME)
			continue;
		/* A name that cannot be read is left out, as if absent. */
		s = elf_strptr(elf, sh->sh_link, dyn.d_un.d_val);
		if (!s)
			continue;
		switch (dyn.d_tag) {
		case DT_NEEDED:
			if (!strncmp(s, EE_TRACEKIT_LIB,
				     strlen(EE_TRACEKIT_LIB)))
				o->links_tracekit = true;
			ret = ee_strv_take(&o->needed, strdup(s));
			if (ret)
				goto nomem;
			break;
		case DT_SONAME:
			if (!o->soname && !(o->soname = strdup(s)))
				goto nomem;
			break;
		case DT_RPATH:
			if (!rpath)
				rpath = s;
			break;
		case DT_RUNPATH:
			if (!runpath)
				runpath = s;
			break;
		}
	}
	/* DT_RUNPATH hides DT_RPATH. */
	if (runpath) {
		o->has_runpath = true;
		ret = ee_add_path(&o->runpath, runpath, o->origin, false);
	} else if (rpath) {
		ret = ee_add_path(&o->rpath, rpath, o->origin, false);
	} else {
		ret = 0;
	}
	if (ret)
		goto nomem;
	return 0;
nomem:
	return ee_fail(c, -ENOMEM, "cannot read '%s': %s", o->path,
		       strerror(ENOMEM));
}

/*
 * Read the open file @fd into @o (o->path and o->origin set).  If @want,
 * the file must match it, else it is recorded in c->ident.  Returns 0,
 * -EINVAL if the file is not a (matching, readable) ELF file, -ENOTSUP,
 * or -ENOMEM.
 */
static int ee_read_fd(struct ee_ctx *c, struct ee_obj *o, int fd,
		      const struct ee_ident *want)
{
	bool found_meta = false, found_dyn = false;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	struct stat st;
	Elf_Scn *scn = NULL;
	size_t shnum, shstrndx;
	const char *name;
	Elf *elf;
	int ret = 0;

	if (fstat(fd, &st) < 0)
		return ee_fail(c, -errno, "cannot open '%s': %s", o->path,
			       strerror(errno));
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		ret = ee_fail(c, -EINVAL, "'%s' is not an ELF file", o->path);
		goto out;
	}
	if (want) {
		if (eh.e_ident[EI_CLASS] != want->class ||
		    eh.e_ident[EI_DATA] != want->data ||
		    eh.e_machine != want->machine) {
			ret = ee_fail(c, -EINVAL,
				      "'%s' is not for the program's machine",
				      o->path);
			goto out;
		}
	} else {
		c->ident.class = eh.e_ident[EI_CLASS];
		c->ident.data = eh.e_ident[EI_DATA];
		c->ident.machine = eh.e_machine;
	}
	if (elf_getshdrnum(elf, &shnum) < 0 ||
	    elf_getshdrstrndx(elf, &shstrndx) < 0) {
		ret = ee_damaged(c, o->path, ee_elf_why());
		goto out;
	}
	/* libelf takes a table past the end of the file for no sections. */
	if (eh.e_shnum > shnum)
		shnum = eh.e_shnum;
	if (eh.e_shoff && shnum &&
	    (eh.e_shentsize != gelf_fsize(elf, ELF_T_SHDR, 1, EV_CURRENT) ||
	     eh.e_shoff > (uint64_t)st.st_size ||
	     shnum > ((uint64_t)st.st_size - eh.e_shoff) / eh.e_shentsize)) {
		ret = ee_damaged(c, o->path, "section headers outside the file");
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh)) {
			ret = ee_damaged(c, o->path, ee_elf_why());
			goto out;
		}
		if (sh.sh_type == SHT_DYNAMIC && !found_dyn) {
			found_dyn = true;
			if (!ee_in_file(&sh, (uint64_t)st.st_size)) {
				ret = ee_damaged(c, o->path,
						 "dynamic section outside the file");
				goto out;
			}
			ret = ee_read_dynamic(c, o, elf, scn, &sh);
			if (ret)
				goto out;
			continue;
		}
		if (found_meta || (sh.sh_type != SHT_PROGBITS &&
				   sh.sh_type != SHT_NOBITS))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, EE_SECTION) != 0)
			continue;
		/* SHT_NOBITS: the section takes no room in the file. */
		found_meta = true;
		if (sh.sh_type == SHT_NOBITS)
			continue;
		if (!ee_in_file(&sh, (uint64_t)st.st_size)) {
			ret = ee_damaged(c, o->path, "section '" EE_SECTION
					 "' outside the file");
			goto out;
		}
		ret = ee_read_meta(c, o, scn, &sh);
		if (ret)
			goto out;
	}
out:
	elf_end(elf);
	return ret;
}

/*
 * Try @path as the library @name needed by object @req.  Returns an
 * enum ee_try, or -ENOMEM.
 */
static int ee_try_path(struct ee_ctx *c, unsigned req, const char *name,
		       char *path)
{
	struct ee_obj o = { .parent = (int)req };
	struct ee_obj *grown;
	struct stat st;
	char *real, *err;
	unsigned i, cap;
	int fd, ret;

	/*
	 * Only regular files big enough for an ELF header: never open a FIFO
	 * or device a name points to, nor read a /proc file such as kmsg,
	 * whose reads have effects (they all show size 0).
	 */
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size < EE_MIN_SIZE) {
		free(path);
		return EE_NOT_HERE;
	}
	real = realpath(path, NULL);
	if (!real) {
		ret = errno == ENOMEM ? -ENOMEM : EE_NOT_HERE;
		free(path);
		return ret;
	}
	for (i = 0; i < c->count; i++) {
		if (!strcmp(c->obj[i].real, real)) {
			free(real);
			free(path);
			return EE_KNOWN;
		}
	}
	o.path = path;
	o.real = real;
	o.origin = ee_dirname(path);
	o.loaded_as = strdup(name);
	if (!o.origin || !o.loaded_as) {
		ret = -ENOMEM;
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		ret = EE_NOT_HERE;
		goto out;
	}
	/* Why a candidate is passed over is not worth telling. */
	err = c->err;
	c->err = NULL;
	ret = ee_read_fd(c, &o, fd, &c->ident);
	c->err = err;
	close(fd);
	if (ret == -ENOMEM)
		goto out;
	if (ret) {
		ret = EE_NOT_HERE;
		goto out;
	}
	if (c->count == c->cap) {
		cap = c->cap * 2;
		if (cap > EE_MAX_MODULES)
			cap = EE_MAX_MODULES;
		grown = realloc(c->obj, cap * sizeof(*grown));
		if (!grown) {
			ret = -ENOMEM;
			goto out;
		}
		c->obj = grown;
		c->cap = cap;
	}
	c->obj[c->count++] = o;
	return EE_NEW;
out:
	ee_obj_free(&o);
	return ret;
}

/*
 * Try @name in each directory of @dirs; 1 when the search is over.  @dirs
 * may belong to an object in c->obj, which moves only when a library is
 * taken, and that ends the loop.
 */
static int ee_try_dirs(struct ee_ctx *c, unsigned req, const char *name,
		       const struct ee_strv *dirs)
{
	char *path;
	size_t i;
	int ret;

	for (i = 0; i < dirs->n; i++) {
		path = ee_join(dirs->v[i], name);
		if (!path)
			return -ENOMEM;
		ret = ee_try_path(c, req, name, path);
		if (ret < 0)
			return ret;
		if (ret != EE_NOT_HERE)
			return 1;
	}
	return 0;
}

/* Find the library @name needed by object @req, as ld.so would. */
static int ee_resolve(struct ee_ctx *c, unsigned req, const char *name)
{
	const struct ee_obj *r = &c->obj[req];
	char *path;
	unsigned i;
	int ret, j;

	for (i = 0; i < c->count; i++) {
		if ((c->obj[i].loaded_as && !strcmp(c->obj[i].loaded_as, name)) ||
		    (c->obj[i].soname && !strcmp(c->obj[i].soname, name)))
			return 0;
	}
	if (strchr(name, '/')) {
		path = strdup(name);
		if (!path)
			return -ENOMEM;
		ret = ee_try_path(c, req, name, path);
		return ret < 0 ? ret : 0;
	}
	if (!r->has_runpath) {
		for (j = (int)req; j >= 0; j = c->obj[j].parent) {
			if (c->obj[j].has_runpath)
				continue;
			ret = ee_try_dirs(c, req, name, &c->obj[j].rpath);
			if (ret)
				return ret < 0 ? ret : 0;
		}
	}
	ret = ee_try_dirs(c, req, name, &c->llp);
	if (ret)
		return ret < 0 ? ret : 0;
	ret = ee_try_dirs(c, req, name, &r->runpath);
	if (ret)
		return ret < 0 ? ret : 0;
	if (r->nodeflib)
		return 0;
	ret = ee_try_dirs(c, req, name, &c->defaults);
	return ret < 0 ? ret : 0;
}

/* The default directories for the program's machine, multiarch first. */
static int ee_add_defaults(struct ee_ctx *c)
{
	const char *ma = ee_multiarch(&c->ident);
	size_t k;
	int ret;

	if (ma) {
		ret = ee_strv_take(&c->defaults, ee_join("/lib", ma));
		if (ret)
			return ret;
		ret = ee_strv_take(&c->defaults, ee_join("/usr/lib", ma));
		if (ret)
			return ret;
	}
	for (k = 0; k < sizeof(ee_default_dirs) / sizeof(ee_default_dirs[0]);
	     k++) {
		ret = ee_strv_take(&c->defaults, strdup(ee_default_dirs[k]));
		if (ret)
			return ret;
	}
	return 0;
}

/* Read the program @path into c->obj[0]. */
static int ee_read_main(struct ee_ctx *c, const char *path)
{
	struct ee_obj *o = &c->obj[0];
	struct stat st;
	int fd, ret;

	o->parent = -1;
	o->path = strdup(path);
	if (!o->path)
		goto nomem;
	if (stat(path, &st) < 0)
		return ee_fail(c, -errno, "cannot open '%s': %s", path,
			       strerror(errno));
	if (S_ISDIR(st.st_mode))
		return ee_fail(c, -EISDIR, "cannot open '%s': %s", path,
			       strerror(EISDIR));
	if (!S_ISREG(st.st_mode) || st.st_size < EE_MIN_SIZE)
		return ee_fail(c, -EINVAL, "'%s' is not an ELF file", path);
	o->real = realpath(path, NULL);
	if (!o->real) {
		if (errno == ENOMEM)
			goto nomem;
		o->real = strdup(path);
		if (!o->real)
			goto nomem;
	}
	o->origin = ee_dirname(o->real);
	if (!o->origin)
		goto nomem;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return ee_fail(c, -errno, "cannot open '%s': %s", path,
			       strerror(errno));
	ret = ee_read_fd(c, o, fd, NULL);
	close(fd);
	return ret;
nomem:
	return ee_fail(c, -ENOMEM, "cannot read '%s': %s", path,
		       strerror(ENOMEM));
}

int tk_elf_modules_read(const char *path, bool with_needed,
			struct tk_elf_modules *out, char *err, size_t errlen)
{
	struct ee_ctx c = { .err = err, .errlen = errlen };
	const char *llp;
	unsigned i;
	size_t k;
	int ret;

	out->count = 0;
	out->module = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (elf_version(EV_CURRENT) == EV_NONE)
		return ee_fail(&c, -ENOSYS, "cannot read '%s': %s", path,
			       ee_elf_why());

	c.cap = with_needed ? 8 : 1;
	c.obj = calloc(c.cap, sizeof(*c.obj));
	if (!c.obj)
		return ee_fail(&c, -ENOMEM, "cannot read '%s': %s", path,
			       strerror(ENOMEM));
	c.count = 1;
	ret = ee_read_main(&c, path);
	if (ret)
		goto out;

	if (with_needed) {
		llp = getenv("LD_LIBRARY_PATH");
		ret = ee_add_defaults(&c);
		if (!ret && llp && *llp)
			ret = ee_add_path(&c.llp, llp, c.obj[0].origin, true);
		if (ret) {
			ret = ee_fail(&c, ret, "cannot read '%s': %s", path,
				      strerror(-ret));
			goto out;
		}
	}
	/* c.count grows as we go: breadth first. */
	for (i = 0; with_needed && i < c.count; i++) {
		for (k = 0; k < c.obj[i].needed.n; k++) {
			if (c.count >= EE_MAX_MODULES)
				break;
			ret = ee_resolve(&c, i, c.obj[i].needed.v[k]);
			if (ret) {
				ret = ee_fail(&c, ret, "cannot read '%s': %s",
					      path, strerror(-ret));
				goto out;
			}
		}
	}

	out->module = calloc(c.count, sizeof(*out->module));
	if (!out->module) {
		ret = ee_fail(&c, -ENOMEM, "cannot read '%s': %s", path,
			      strerror(ENOMEM));
		goto out;
	}
	for (i = 0; i < c.count; i++) {
		out->module[i].path = c.obj[i].path;
		out->module[i].meta = c.obj[i].meta;
		out->module[i].size = c.obj[i].size;
		out->module[i].links_tracekit = c.obj[i].links_tracekit;
		c.obj[i].path = NULL;
		c.obj[i].meta = NULL;
	}
	out->count = c.count;
out:
	for (i = 0; i < c.count; i++)
		ee_obj_free(&c.obj[i]);
	free(c.obj);
	ee_strv_free(&c.llp);
	ee_strv_free(&c.defaults);
	return ret;
}

void tk_elf_modules_free(struct tk_elf_modules *m)
{
	unsigned i;

	if (!m)
		return;
	for (i = 0; i < m->count; i++) {
		free(m->module[i].path);
		free(m->module[i].meta);
	}
	free(m->module);
	m->module = NULL;
	m->count = 0;
}

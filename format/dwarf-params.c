/* SPDX-License-Identifier: MIT */
/*
 * dwarf-params.c - a function's parameters, by name and type, from its
 * DWARF (libdw), for uprobes that name them (probes.h).
 *
 * The DWARF is found as debuggers find it (libdwfl's standard search):
 * in the file itself, else in the file its .gnu_debuglink names (beside
 * it, in .debug/, under /usr/lib/debug), else by build id under
 * /usr/lib/debug/.build-id/.
 *
 * A uprobe on a function's first instruction sees the arguments where the
 * caller put them, so a parameter's place comes from the x86-64 System V
 * calling convention and its position, not from DWARF locations (which
 * for unoptimized code describe the frame the prologue has yet to build):
 * integers, pointers and enums take %rdi %rsi %rdx %rcx %r8 %r9 in turn,
 * then stack slots; floating point takes vector registers and no integer
 * one.  After an argument whose passing depends on more than its type's
 * class (a struct by value, long double, __int128) the places of the
 * following ones are not known, and they are not offered.
 */
#define _GNU_SOURCE
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probes.h"

#define INT_REGS 6
/* A struct returned in memory: its address comes in %rdi. */
#define RET_IN_REGS_MAX 16

static char *debuginfo_path;

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

enum arg_class { CLASS_INT, CLASS_SSE, CLASS_OTHER };

static bool peeled_type(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute attr;
	Dwarf_Die t;

	if (!dwarf_attr_integrate(die, DW_AT_type, &attr) ||
	    !dwarf_formref_die(&attr, &t))
		return false;
	return dwarf_peel_type(&t, out) == 0;
}

static int encoding_of(Dwarf_Die *t)
{
	Dwarf_Attribute attr;
	Dwarf_Word enc = 0;

	if (!dwarf_attr_integrate(t, DW_AT_encoding, &attr) ||
	    dwarf_formudata(&attr, &enc) != 0)
		return -1;
	return (int)enc;
}

static bool is_char(Dwarf_Die *t)
{
	int enc = encoding_of(t);

	return dwarf_tag(t) == DW_TAG_base_type && dwarf_bytesize(t) == 1 &&
	       (enc == DW_ATE_signed_char || enc == DW_ATE_unsigned_char ||
		enc == DW_ATE_signed || enc == DW_ATE_unsigned);
}

/* The fetch type of a value of DWARF type @die's DW_AT_type (void: ""). */
static enum arg_class classify(Dwarf_Die *die, struct tk_dwarf_value *v)
{
	Dwarf_Die t, pointee;
	int size, enc;

	v->type[0] = '\0';
	if (!peeled_type(die, &t)) {
		snprintf(v->why, sizeof(v->why), "void");
		return CLASS_OTHER;
	}
	size = dwarf_bytesize(&t);
	switch (dwarf_tag(&t)) {
	case DW_TAG_base_type:
		enc = encoding_of(&t);
		if (enc == DW_ATE_float || enc == DW_ATE_complex_float) {
			snprintf(v->why, sizeof(v->why), "floating point");
			return size <= 8 && enc == DW_ATE_float ? CLASS_SSE : CLASS_OTHER;
		}
		if (size != 1 && size != 2 && size != 4 && size != 8) {
			snprintf(v->why, sizeof(v->why), "a %d-byte integer", size);
			return CLASS_OTHER;
		}
		snprintf(v->type, sizeof(v->type), "%c%d",
			 enc == DW_ATE_signed || enc == DW_ATE_signed_char ? 's' : 'u',
			 size * 8);
		return CLASS_INT;
	case DW_TAG_enumeration_type:
		if (size != 1 && size != 2 && size != 4 && size != 8) {
			snprintf(v->why, sizeof(v->why), "an enum of %d bytes", size);
			return CLASS_OTHER;
		}
		snprintf(v->type, sizeof(v->type), "s%d", size * 8);
		return CLASS_INT;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		snprintf(v->type, sizeof(v->type), "%s",
			 peeled_type(&t, &pointee) && is_char(&pointee) ? "string"
									 : "x64");
		return CLASS_INT;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		snprintf(v->why, sizeof(v->why), "a %s passed by value",
			 dwarf_tag(&t) == DW_TAG_union_type ? "union" : "struct");
		return CLASS_OTHER;
	default:
		snprintf(v->why, sizeof(v->why), "of a type with no fetch type");
		return CLASS_OTHER;
	}
}

/* Whether a function returning @fn's type gets a hidden pointer in %rdi. */
static bool returns_in_memory(Dwarf_Die *fn)
{
	Dwarf_Die t;
	int tag;

	if (!peeled_type(fn, &t))
		return false;
	tag = dwarf_tag(&t);
	return (tag == DW_TAG_structure_type || tag == DW_TAG_class_type ||
		tag == DW_TAG_union_type) && dwarf_bytesize(&t) > RET_IN_REGS_MAX;
}

/* The subprogram DIE whose code contains @pc (module address). */
static bool find_function(Dwfl_Module *mod, Dwarf_Addr pc, Dwarf_Die *out)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &bias);
	Dwarf_Die *scopes = NULL;
	int n;
	bool found = false;

	if (!cu)
		return false;
	n = dwarf_getscopes(cu, pc - bias, &scopes);
	/* innermost first: inlined calls at the entry come before */
	for (int i = 0; i < n && !found; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			*out = scopes[i];
			found = true;
		}
	free(scopes);
	return found;
}

static int params_of(Dwarf_Die *fn, struct tk_dwarf_func *out)
{
	Dwarf_Die child, origin;
	Dwarf_Attribute attr;
	Dwarf_Die *parent = fn;
	bool any = false, lost = false;
	int nint, nstack = 0;

	/* an out-of-line copy of an inline function may leave its
	 * parameters to the abstract instance */
	if (dwarf_child(fn, &child) == 0)
		do
			any |= dwarf_tag(&child) == DW_TAG_formal_parameter;
		while (!any && dwarf_siblingof(&child, &child) == 0);
	if (!any && (dwarf_attr(fn, DW_AT_abstract_origin, &attr) ||
		     dwarf_attr(fn, DW_AT_specification, &attr)) &&
	    dwarf_formref_die(&attr, &origin))
		parent = &origin;
	nint = returns_in_memory(fn) ? 1 : 0;
	if (dwarf_child(parent, &child) != 0)
		return 0;
	do {
		struct tk_dwarf_value *v, *grown;
		const char *name;
		enum arg_class c;

		if (dwarf_tag(&child) == DW_TAG_unspecified_parameters)
			break;
		if (dwarf_tag(&child) != DW_TAG_formal_parameter)
			continue;
		grown = realloc(out->param, (out->nparams + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		out->param = grown;
		v = &grown[out->nparams++];
		memset(v, 0, sizeof(*v));
		name = dwarf_diename(&child);
		snprintf(v->name, sizeof(v->name), "%s", name ? name : "");
		c = classify(&child, v);
		v->reg = v->stack = -1;
		if (lost) {
			if (v->type[0])
				snprintf(v->why, sizeof(v->why),
					 "after an argument passed by value");
			v->type[0] = '\0';
		} else if (c == CLASS_INT && nint < INT_REGS) {
			v->reg = nint++;
		} else if (c == CLASS_INT) {
			v->stack = nstack++;
		} else if (c == CLASS_OTHER) {
			lost = true;
		}
		/* CLASS_SSE: in a vector register, nothing taken here (past
		 * eight of them the stack would shift: not counted) */
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* The file last read, kept open: a glob of many functions reads one
 * file's DWARF (and decompresses its sections) once, not per function.
 * The tools are single-threaded. */
static struct {
	char *path;
	Dwfl *dwfl;
	Dwfl_Module *mod;
} last;

static Dwfl_Module *module_of(const char *path)
{
	/* where debug files are looked for, by debuglink and build id:
	 * libdwfl's default (beside the file, .debug/, /usr/lib/debug)
	 * unless TRACEKIT_DEBUGINFO_PATH says otherwise, as elfutils spells
	 * it (":.debug:/usr/lib/debug") */
	debuginfo_path = getenv("TRACEKIT_DEBUGINFO_PATH");
	if (last.path && !strcmp(last.path, path))
		return last.mod;
	if (last.dwfl)
		dwfl_end(last.dwfl);
	free(last.path);
	last.path = strdup(path);
	last.dwfl = last.path ? dwfl_begin(&offline_callbacks) : NULL;
	last.mod = NULL;
	if (last.dwfl) {
		last.mod = dwfl_report_offline(last.dwfl, "", path, -1);
		dwfl_report_end(last.dwfl, NULL, NULL);
	}
	return last.mod;
}

int tk_dwarf_func_read(const char *path, uint64_t addr,
		       struct tk_dwarf_func *out, char *err, size_t errlen)
{
	Dwfl_Module *mod;
	Dwarf_Addr elf_bias, bias;
	Dwarf_Die fn;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	mod = module_of(path);
	if (!last.dwfl) {
		snprintf(err, errlen, "cannot start reading DWARF: %s", dwfl_errmsg(-1));
		return -ENOMEM;
	}
	if (!mod) {
		snprintf(err, errlen, "cannot read '%s': %s", path, dwfl_errmsg(-1));
		ret = -EINVAL;
		goto out;
	}
	/* offline, a module is laid out at an address of libdwfl's
	 * choosing: link-time addresses move by the main file's bias */
	if (!dwfl_module_getelf(mod, &elf_bias)) {
		snprintf(err, errlen, "cannot read '%s': %s", path, dwfl_errmsg(-1));
		ret = -EINVAL;
		goto out;
	}
	if (!dwfl_module_getdwarf(mod, &bias)) {
		snprintf(err, errlen, "'%s' has no DWARF (no debug info in it, its debuglink or build id)",
			 path);
		ret = -ENODATA;
		goto out;
	}
	if (!find_function(mod, addr + elf_bias, &fn)) {
		snprintf(err, errlen, "the DWARF of '%s' describes no function at 0x%llx",
			 path, (unsigned long long)addr);
		ret = -ENODATA;
		goto out;
	}
	ret = params_of(&fn, out);
	if (!ret) {
		classify(&fn, &out->ret);
		snprintf(out->ret.name, sizeof(out->ret.name), "retval");
		out->ret.reg = out->ret.stack = -1;
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
out:
	if (ret)
		tk_dwarf_func_free(out);
	return ret;
}

void tk_dwarf_func_free(struct tk_dwarf_func *f)
{
	free(f->param);
	memset(f, 0, sizeof(*f));
}

/*
 * seed-asm.c: writes the seed corpus of fuzz-asm into a directory: small
 * ELF files built with libelf whose function "dot" holds a loop (x86-64:
 * SSE, AVX, idiv, a back-edge; AArch64: NEON, sdiv, FP), as a shared
 * object with a PT_LOAD segment and a build id, as an object file with a
 * relocated call, and stripped down to .dynsym; and, when a C compiler is
 * at hand, a small shared library built with -g, for the DWARF line paths
 * and an inlined function (dot_step).
 * usage: seed-asm DIR
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

enum layout { SHARED, OBJECT, STRIPPED };

struct scn_spec {
	const char *name;
	GElf_Word type;
	GElf_Xword flags, entsize;
	GElf_Word link, info;
	const void *data;
	size_t size;
	Elf_Type dtype;
	GElf_Addr addr;
};

static GElf_Word name_at(const char *tab, size_t size, const char *name)
{
	return (GElf_Word)((const char *)memmem(tab, size, name, strlen(name) + 1) - tab);
}

static int write_elf(const char *path, unsigned machine, enum layout layout,
		     const unsigned char *code, size_t code_len)
{
	static const char shstr[] =
		"\0.text\0.symtab\0.strtab\0.dynsym\0.dynstr\0.rela.text\0"
		".note.gnu.build-id\0.shstrtab";
	static const char strtab[] = "\0dot\0dot_tail\0_start";
	static const unsigned char note[] = {
		4, 0, 0, 0, 8, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0,
		0xde, 0xad, 0xbe, 0xef, 0x01, 0x23, 0x45, 0x67,
	};
	const GElf_Addr text = layout == OBJECT ? 0 : 0x1000;
	Elf64_Sym syms[4];
	Elf64_Rela rela[1];
	int fd, ret = -1;
	Elf *e;
	GElf_Ehdr eh;
	Elf_Scn *text_scn = NULL;
	size_t shstrndx = 0;

	memset(syms, 0, sizeof(syms));
	syms[1] = (Elf64_Sym){ name_at(strtab, sizeof(strtab), "dot"),
			       GELF_ST_INFO(STB_GLOBAL, STT_FUNC), 0, 1, text, code_len - 8 };
	syms[2] = (Elf64_Sym){ name_at(strtab, sizeof(strtab), "dot_tail"),
			       GELF_ST_INFO(STB_LOCAL, STT_FUNC), 0, 1, text + code_len - 8, 8 };
	syms[3] = (Elf64_Sym){ name_at(strtab, sizeof(strtab), "_start"),
			       GELF_ST_INFO(STB_GLOBAL, STT_FUNC), 0, 1, text, code_len };
	rela[0] = (Elf64_Rela){ 4, GELF_R_INFO(3, machine == EM_X86_64 ? 4 : 283), -4 };

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0)
		return -1;
	e = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!e || !gelf_newehdr(e, ELFCLASS64) || !gelf_getehdr(e, &eh))
		goto out;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_machine = (GElf_Half)machine;
	eh.e_type = layout == OBJECT ? ET_REL : ET_DYN;
	eh.e_version = EV_CURRENT;
	eh.e_entry = text;
	{
		const char *symtab = layout == STRIPPED ? ".dynsym" : ".symtab";
		const char *strs = layout == STRIPPED ? ".dynstr" : ".strtab";
		const struct scn_spec specs[] = {
			{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0, 0, 0, code, code_len, ELF_T_BYTE, text },
			{ symtab, layout == STRIPPED ? SHT_DYNSYM : SHT_SYMTAB, 0, sizeof(Elf64_Sym), 3, 2,
			  syms, sizeof(syms), ELF_T_SYM, 0 },
			{ strs, SHT_STRTAB, 0, 0, 0, 0, strtab, sizeof(strtab), ELF_T_BYTE, 0 },
			{ layout == OBJECT ? ".rela.text" : ".note.gnu.build-id",
			  layout == OBJECT ? SHT_RELA : SHT_NOTE, layout == OBJECT ? 0 : SHF_ALLOC,
			  layout == OBJECT ? sizeof(Elf64_Rela) : 0, layout == OBJECT ? 2 : 0,
			  layout == OBJECT ? 1 : 0,
			  layout == OBJECT ? (const void *)rela : note,
			  layout == OBJECT ? sizeof(rela) : sizeof(note),
			  layout == OBJECT ? ELF_T_RELA : ELF_T_NHDR, 0 },
			{ ".shstrtab", SHT_STRTAB, 0, 0, 0, 0, shstr, sizeof(shstr), ELF_T_BYTE, 0 },
		};

		for (size_t i = 0; i < ARRAY_SIZE(specs); i++) {
			Elf_Scn *scn = elf_newscn(e);
			Elf_Data *d = scn ? elf_newdata(scn) : NULL;
			GElf_Shdr sh;

			if (!d || !gelf_getshdr(scn, &sh))
				goto out;
			d->d_buf = (void *)specs[i].data;
			d->d_size = specs[i].size;
			d->d_type = specs[i].dtype;
			d->d_align = 8;
			d->d_version = EV_CURRENT;
			sh.sh_name = name_at(shstr, sizeof(shstr), specs[i].name);
			sh.sh_type = specs[i].type;
			sh.sh_flags = specs[i].flags;
			sh.sh_entsize = specs[i].entsize;
			sh.sh_link = specs[i].link;
			sh.sh_info = specs[i].info;
			sh.sh_addr = specs[i].addr;
			if (!gelf_update_shdr(scn, &sh))
				goto out;
			if (i == 0)
				text_scn = scn;
			if (!strcmp(specs[i].name, ".shstrtab"))
				shstrndx = elf_ndxscn(scn);
		}
	}
	eh.e_shstrndx = (GElf_Half)shstrndx;
	/* after the header update, which would reset the count */
	if (!gelf_update_ehdr(e, &eh) || (layout != OBJECT && !gelf_newphdr(e, 1)) ||
	    elf_update(e, ELF_C_NULL) < 0)
		goto out;
	if (layout != OBJECT) {
		/* one PT_LOAD over .text, now that libelf has placed it */
		GElf_Shdr sh;
		GElf_Phdr ph = { .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_align = 1 };

		if (!gelf_getshdr(text_scn, &sh))
			goto out;
		ph.p_offset = sh.sh_offset;
		ph.p_vaddr = ph.p_paddr = text;
		ph.p_filesz = ph.p_memsz = code_len;
		if (!gelf_update_phdr(e, 0, &ph))
			goto out;
	}
	if (elf_update(e, ELF_C_WRITE) < 0)
		goto out;
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "seed-asm: %s: %s\n", path, elf_errmsg(-1));
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

/* dot() with DWARF and dot_step() inlined into it, packed tight (small pages) to stay under the fuzzer's max_len. */
static int compile_seed(const char *dir)
{
	static const char src[] =
		"static inline __attribute__((always_inline)) float\n"
		"dot_step(float a, float b, int i, int d)\n"
		"{\n\treturn a * b + i % d;\n}\n"
		"float dot(const float *a, const float *b, int n, int d)\n"
		"{\n\tfloat s = 0;\n"
		"\tfor (int i = 0; i < n; i++)\n\t\ts += dot_step(a[i], b[i], i, d);\n"
		"\treturn s;\n}\n";
	char *c = xstrfmt("%s/dwarf.c", dir), *cmd;
	FILE *f = fopen(c, "w");

	if (!f || fputs(src, f) < 0 || fclose(f)) {
		free(c);
		return -1;
	}
	cmd = xstrfmt("cc -O2 -g -shared -fPIC -nostdlib -Wl,-z,max-page-size=16 "
		      "-Wl,-z,noseparate-code -Wl,-z,norelro -o '%s/dwarf.so' '%s' 2>/dev/null",
		      dir, c);
	if (system(cmd))
		fprintf(stderr, "seed-asm: no C compiler: the DWARF seed is left out\n");
	unlink(c);
	free(cmd);
	free(c);
	return 0;
}

int main(int argc, char **argv)
{
	/*
	 * dot: xor eax,eax; call rel32 (relocated in the object file);
	 * loop: movss xmm0,[rdi+rax*4]; mulss xmm0,[rsi+rax*4]; addss xmm1,xmm0;
	 * vmulps ymm1,ymm4,[rcx]; mov eax,[rdi]; cdq; idiv ecx; inc rax;
	 * cmp rax,rdx; jne loop; ret; dot_tail: 8 bytes of nop.
	 */
	static const unsigned char x86[] = {
		0x31, 0xc0, 0x90, 0xe8, 0x00, 0x00, 0x00, 0x00,
		0xf3, 0x0f, 0x10, 0x04, 0x87, 0xf3, 0x0f, 0x59, 0x04, 0x86,
		0xf3, 0x0f, 0x58, 0xc8, 0xc5, 0xdc, 0x59, 0x09,
		0x8b, 0x07, 0x99, 0xf7, 0xf9, 0x48, 0xff, 0xc0,
		0x48, 0x39, 0xd0, 0x75, 0xe1, 0xc3,
		0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	/*
	 * dot: mov x8,xzr; bl (relocated); loop: ldr s0,[x0,x8,lsl #2];
	 * fadd s1,s1,s0; fadd v0.4s,v0.4s,v1.4s; sdiv w9,w9,w2; add x8,x8,#1;
	 * cmp x8,x1; b.ne loop; ret; dot_tail: nop; nop.
	 */
	static const unsigned char a64[] = {
		0xe8, 0x03, 0x1f, 0xaa, 0x00, 0x00, 0x00, 0x94,
		0x00, 0x78, 0x68, 0xbc, 0x21, 0x28, 0x20, 0x1e,
		0x00, 0xd4, 0x21, 0x4e, 0x29, 0x0d, 0xc2, 0x1a,
		0x08, 0x05, 0x00, 0x91, 0x1f, 0x01, 0x01, 0xeb,
		0x41, 0xff, 0xff, 0x54, 0xc0, 0x03, 0x5f, 0xd6,
		0x1f, 0x20, 0x03, 0xd5, 0x1f, 0x20, 0x03, 0xd5,
	};
	static const struct { const char *name; unsigned machine; enum layout layout; } files[] = {
		{ "x86-64.so", EM_X86_64, SHARED },
		{ "x86-64.o", EM_X86_64, OBJECT },
		{ "x86-64-stripped.so", EM_X86_64, STRIPPED },
		{ "aarch64.so", EM_AARCH64, SHARED },
		{ "aarch64.o", EM_AARCH64, OBJECT },
	};
	int ret = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: seed-asm DIR\n");
		return 2;
	}
	if (elf_version(EV_CURRENT) == EV_NONE)
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char *path = xstrfmt("%s/%s", argv[1], files[i].name);
		bool is_x86 = files[i].machine == EM_X86_64;

		ret |= write_elf(path, files[i].machine, files[i].layout,
				 is_x86 ? x86 : a64, is_x86 ? sizeof(x86) : sizeof(a64));
		free(path);
	}
	ret |= compile_seed(argv[1]);
	return ret ? 1 : 0;
}

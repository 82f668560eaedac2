/*
 * seed-doctor.c: writes the seed corpus of fuzz-doctor into a directory:
 * small ELF files built with libelf (x86-64 PIE-like, i386, aarch64 big and
 * little endian) with code, symbols, a build id note, a dynamic section with
 * DT_NEEDED, a .gnu_debuglink and a .debug_info section, so the fuzzer
 * starts from every structure the doctor reads.
 * usage: seed-doctor DIR
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"
#include "strbuf.h"

struct scn_spec {
	const char *name;
	GElf_Word type;
	GElf_Xword flags, entsize;
	GElf_Word link;
	const void *data;
	size_t size;
	Elf_Type dtype;
	GElf_Addr addr;
};

static int write_elf(const char *path, int cls, int data_enc, unsigned machine,
		     const unsigned char *code, size_t code_len)
{
	static const char shstr[] =
		"\0.text\0.symtab\0.strtab\0.note.gnu.build-id\0.dynamic\0.dynstr\0"
		".gnu_debuglink\0.debug_info\0.shstrtab";
	static const char strtab[] = "\0main\0work\0leaf\0_start";
	static const char dynstr[] = "\0libc.so.6\0libm.so.6";
	static const unsigned char note[] = {
		4, 0, 0, 0, 8, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0,
		0xde, 0xad, 0xbe, 0xef, 0x01, 0x23, 0x45, 0x67,
	};
	static const unsigned char debuglink[] = {
		'a', 'p', 'p', '.', 'd', 'e', 'b', 'u', 'g', 0, 0, 0, 0x78, 0x56, 0x34, 0x12,
	};
	static const unsigned char debug_info[16] = { 0x0c, 0, 0, 0, 5, 0 };
	unsigned char syms[5 * sizeof(Elf64_Sym)], dyn[4 * sizeof(Elf64_Dyn)];
	size_t symsize = cls == ELFCLASS64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	size_t dynsize = cls == ELFCLASS64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
	const GElf_Addr text = 0x1000;
	int fd, ret = -1;
	Elf *e;
	GElf_Ehdr eh;
	size_t shstrndx = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0)
		return -1;
	e = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!e || !gelf_newehdr(e, cls) || !gelf_getehdr(e, &eh))
		goto out;
	eh.e_ident[EI_DATA] = (unsigned char)data_enc;
	eh.e_machine = (GElf_Half)machine;
	eh.e_type = ET_DYN;
	eh.e_version = EV_CURRENT;
	eh.e_entry = text;

	/* symbols: null, main, work, leaf (code offsets 0, 8, 16), _start */
	memset(syms, 0, sizeof(syms));
	memset(dyn, 0, sizeof(dyn));
	{
		const char *names[] = { NULL, "main", "work", "leaf", "_start" };
		for (int i = 1; i < 5; i++) {
			GElf_Sym s = {
				.st_name = (GElf_Word)((const char *)memmem(strtab, sizeof(strtab),
						names[i], strlen(names[i]) + 1) - strtab),
				.st_info = GELF_ST_INFO(STB_GLOBAL, STT_FUNC),
				.st_shndx = 1,
				.st_value = text + (GElf_Addr)(i - 1) * 8,
				.st_size = 8,
			};
			if (cls == ELFCLASS64) {
				Elf64_Sym s64 = { s.st_name, s.st_info, 0, s.st_shndx, s.st_value, s.st_size };
				memcpy(syms + i * symsize, &s64, symsize);
			} else {
				Elf32_Sym s32 = { s.st_name, (Elf32_Addr)s.st_value, (Elf32_Word)s.st_size,
						  s.st_info, 0, s.st_shndx };
				memcpy(syms + i * symsize, &s32, symsize);
			}
		}
		for (int i = 0; i < 3; i++) {
			GElf_Sxword tag = i == 0 ? DT_NEEDED : i == 1 ? DT_NEEDED : DT_FLAGS_1;
			GElf_Xword val = i == 0 ? 1 : i == 1 ? 11 : DF_1_PIE;
			if (cls == ELFCLASS64) {
				Elf64_Dyn d64 = { tag, { val } };
				memcpy(dyn + i * dynsize, &d64, dynsize);
			} else {
				Elf32_Dyn d32 = { (Elf32_Sword)tag, { (Elf32_Word)val } };
				memcpy(dyn + i * dynsize, &d32, dynsize);
			}
		}
	}
	{
		const struct scn_spec specs[] = {
			{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0, 0, code, code_len, ELF_T_BYTE, text },
			{ ".symtab", SHT_SYMTAB, 0, symsize, 3, syms, 5 * symsize, ELF_T_SYM, 0 },
			{ ".strtab", SHT_STRTAB, 0, 0, 0, strtab, sizeof(strtab), ELF_T_BYTE, 0 },
			{ ".note.gnu.build-id", SHT_NOTE, SHF_ALLOC, 0, 0, note, sizeof(note), ELF_T_NHDR, 0 },
			{ ".dynamic", SHT_DYNAMIC, SHF_ALLOC, dynsize, 6, dyn, 4 * dynsize, ELF_T_DYN, 0 },
			{ ".dynstr", SHT_STRTAB, SHF_ALLOC, 0, 0, dynstr, sizeof(dynstr), ELF_T_BYTE, 0 },
			{ ".gnu_debuglink", SHT_PROGBITS, 0, 0, 0, debuglink, sizeof(debuglink), ELF_T_BYTE, 0 },
			{ ".debug_info", SHT_PROGBITS, 0, 0, 0, debug_info, sizeof(debug_info), ELF_T_BYTE, 0 },
			{ ".shstrtab", SHT_STRTAB, 0, 0, 0, shstr, sizeof(shstr), ELF_T_BYTE, 0 },
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
			d->d_align = 1;
			d->d_version = EV_CURRENT;
			sh.sh_name = (GElf_Word)((const char *)memmem(shstr, sizeof(shstr),
					specs[i].name, strlen(specs[i].name) + 1) - shstr);
			sh.sh_type = specs[i].type;
			sh.sh_flags = specs[i].flags;
			sh.sh_entsize = specs[i].entsize;
			sh.sh_link = specs[i].link;
			sh.sh_addr = specs[i].addr;
			if (specs[i].type == SHT_SYMTAB)
				sh.sh_info = 1;
			if (!gelf_update_shdr(scn, &sh))
				goto out;
			if (!strcmp(specs[i].name, ".shstrtab"))
				shstrndx = elf_ndxscn(scn);
		}
	}
	eh.e_shstrndx = (GElf_Half)shstrndx;
	if (!gelf_update_ehdr(e, &eh) || elf_update(e, ELF_C_WRITE) < 0)
		goto out;
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "seed-doctor: %s: %s\n", path, elf_errmsg(-1));
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	/* main: endbr64; push rbp; mov rsp,rbp; work: push rbx; sub; leaf: mov; ret */
	static const unsigned char x86[] = {
		0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5,
		0x53, 0x48, 0x83, 0xec, 0x10, 0x90, 0x90, 0x90,
		0x48, 0x89, 0xf8, 0xc3, 0x90, 0x90, 0x90, 0x90,
		0x31, 0xed, 0x49, 0x89, 0xd1, 0x5e, 0x90, 0x90,
	};
	static const unsigned char i386[] = {
		0x55, 0x89, 0xe5, 0x90, 0x90, 0x90, 0x90, 0x90,
		0x53, 0x83, 0xec, 0x08, 0x90, 0x90, 0x90, 0x90,
		0x89, 0xc8, 0xc3, 0x90, 0x90, 0x90, 0x90, 0x90,
		0x31, 0xed, 0x5e, 0x90, 0x90, 0x90, 0x90, 0x90,
	};
	/* stp x29,x30,[sp,#-32]!; mov x29,sp / str x30,[sp,#-16]!; bl / add; ret */
	static const unsigned char a64le[] = {
		0xfd, 0x7b, 0xbe, 0xa9, 0xfd, 0x03, 0x00, 0x91,
		0xfe, 0x0f, 0x1f, 0xf8, 0x00, 0x00, 0x00, 0x94,
		0x00, 0x04, 0x00, 0x91, 0xc0, 0x03, 0x5f, 0xd6,
		0x1d, 0x00, 0x80, 0xd2, 0x1e, 0x00, 0x80, 0xd2,
	};
	unsigned char a64be[sizeof(a64le)];
	char *path;
	int ret = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: seed-doctor DIR\n");
		return 2;
	}
	if (elf_version(EV_CURRENT) == EV_NONE)
		return 1;
	for (size_t i = 0; i < sizeof(a64le); i += 4)
		for (size_t j = 0; j < 4; j++)
			a64be[i + j] = a64le[i + 3 - j];
	path = xstrfmt("%s/x86-64.elf", argv[1]);
	ret |= write_elf(path, ELFCLASS64, ELFDATA2LSB, EM_X86_64, x86, sizeof(x86));
	free(path);
	path = xstrfmt("%s/i386.elf", argv[1]);
	ret |= write_elf(path, ELFCLASS32, ELFDATA2LSB, EM_386, i386, sizeof(i386));
	free(path);
	path = xstrfmt("%s/aarch64.elf", argv[1]);
	ret |= write_elf(path, ELFCLASS64, ELFDATA2LSB, EM_AARCH64, a64le, sizeof(a64le));
	free(path);
	path = xstrfmt("%s/aarch64-be.elf", argv[1]);
	ret |= write_elf(path, ELFCLASS64, ELFDATA2MSB, EM_AARCH64, a64be, sizeof(a64be));
	free(path);
	path = xstrfmt("%s/script", argv[1]);
	ret |= write_file_atomic(path, "#!/bin/sh -e\nexit 0\n", 20);
	free(path);
	return ret ? 1 : 0;
}

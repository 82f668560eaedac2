# vars.mk: read together with the top-level Makefile to print one of its
# variables (make -f Makefile -f fuzz/vars.mk print-LDLIBS), so the fuzz
# build links with exactly the libraries hotloop links with.
print-%:
	@echo '$($*)'

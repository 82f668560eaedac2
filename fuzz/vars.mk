# vars.mk: read together with the top-level Makefile to print one of its
# variables as it stands (make -f Makefile -f fuzz/vars.mk print-LDLIBS),
# so the fuzz build links and includes like hotloop itself does.
print-%:
	$(info $($*))
	@:

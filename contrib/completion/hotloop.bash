# bash completion for hotloop: source it from ~/.bashrc or install it into
# /usr/share/bash-completion/completions/hotloop.
_hotloop()
{
	local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]}
	local commands="record report flame convert push brief run asm doctor bench compare init config scale scenario load canary catalog kb store loop schedule pr serve mcp help"

	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
		return
	fi
	case "$cmd" in
	record)  opts="-F --freq -o --output -g --call-graph -p --pid -d --duration -m --mmap-pages --off-cpu --heap --heap-rate --heap-max-stacks --help" ;;
	report)  opts="--top --sort --by --no-inline --sample-type --json --help" ;;
	flame)   opts="-o --output --diff --reverse --title --width --min-width --sample-type --no-inline --help" ;;
	convert) opts="-o --output --to --weight --help" ;;
	push)    opts="--name --from --until --header --timeout --cacert --json --help" ;;
	brief)   opts="--budget --format --json --owned --focus --top --context --scale --workload --sample-type --kb --rev -f --config --help" ;;
	run)     opts="-f --config -F --freq --call-graph --size --scale --no-build --budget --format --help" ;;
	asm)     opts="--fn --profile --sample-type --all --json --help" ;;
	loop)    opts="--rounds --agent --lenses --parallel --from --every --batches -f --config --json --no-sandbox --help" ;;
	schedule) opts="--every --agent --rounds --systemd --crontab -f --config --json --help"
		 if [ "$COMP_CWORD" -eq 2 ] && [[ "$cur" != -* ]]; then
			COMPREPLY=($(compgen -W "install remove status" -- "$cur"))
			return
		 fi ;;
	pr)      opts="--branch --base --command -o --output --dry-run -f --config --json --help" ;;
	doctor)  opts="--json --help" ;;
	bench)   opts="-n --runs -w --warmup -m --metric -t --timeout -e --env --pin --max-wait --heap --json --help" ;;
	compare) opts="-m --metric --min-improvement --guard-regression --ram-budget --ram-budget-on --heap -n --pairs --looks -w --warmup -t --timeout --order --metric-rule -e --env --max-wait --pin --no-fingerprint --json --base --cand --no-build --no-test -f --config --help" ;;
	init)    opts="--force --help" ;;
	config)  opts="-f --file --json --help" ;;
	scale)   opts="-s --sizes -F --freq -g --call-graph -r --repeat --min-samples -n --top -o --output --json -f --config --help" ;;
	scenario) opts="-f --config -o --output --overlay --profile --json --base --cand --runs --no-build --no-test --heap --help" ;;
	load)    opts="--rate --duration --poisson --seed -c --connections --window --warmup --timeout --request -X --method -H --header -d --data --line --json --help" ;;
	canary)  opts="-f --config -o --output --base --cand --base-cmd --cand-cmd --no-build --profiles --by --sample-type --confidence --min-share --tolerance --work --top --json --help" ;;
	catalog) opts="check scan review hook add --catalog --no-default --severity --format --jobs --profile --min-share --base --cached --staged --from-kb --output --dir --config --help"
		 if [ "$COMP_CWORD" -eq 3 ] && [ "${COMP_WORDS[2]}" = hook ]; then
			COMPREPLY=($(compgen -W "install remove status" -- "$cur"))
			return
		 fi ;;
	kb)      opts="--function --diff --json --dir -f --config --help"
		 if [ "$COMP_CWORD" -eq 2 ] && [[ "$cur" != -* ]]; then
			COMPREPLY=($(compgen -W "list show search" -- "$cur"))
			return
		 fi ;;
	store)   opts="--db --json --help" ;;
	serve)   opts="--port --host --token --allow-host --open --db --max-clients --timeout --quiet --snapshot --help" ;;
	mcp)     opts="--allow-commands --root -f --config --db --help" ;;
	help)    opts="$commands" ;;
	esac
	if [[ "$cur" == -* || "$cmd" == help ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -F _hotloop hotloop

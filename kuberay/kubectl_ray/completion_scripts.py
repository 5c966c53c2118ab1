"""The scripts ``kubectl ray completion bash|zsh|fish`` prints. Each asks
``kubectl-ray __complete WORD... PARTIAL`` for candidates (last line ``:<directive>``;
bit 4 set: no file names) and hands them to the shell."""

BASH = r"""# bash completion for kubectl-ray (kubectl ray completion bash)
_kubectl_ray_complete() {
    local cur out directive line
    local -a cands
    cur="${COMP_WORDS[COMP_CWORD]}"
    out=$(kubectl-ray __complete "${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" 2>/dev/null)
    directive=4
    cands=()
    while IFS='' read -r line; do
        case "$line" in
            :*) directive="${line#:}" ;;
            "") ;;
            *) cands+=("${line%%$'\t'*}") ;;
        esac
    done <<< "$out"
    COMPREPLY=()
    if (( ${#cands[@]} )); then
        COMPREPLY=("${cands[@]}")
        if (( directive & 2 )); then compopt -o nospace 2>/dev/null; fi
    elif (( (directive & 4) == 0 )); then
        compopt -o default 2>/dev/null
    fi
}
complete -F _kubectl_ray_complete kubectl-ray
"""

ZSH = r"""#compdef kubectl-ray
# zsh completion for kubectl-ray (kubectl ray completion zsh)
_kubectl_ray() {
    local out directive
    local -a lines comps
    out=$(kubectl-ray __complete "${(@)words[2,CURRENT]}" 2>/dev/null)
    lines=("${(@f)out}")
    directive=${${lines[-1]}#:}
    comps=("${(@)lines[1,-2]}")
    if (( ${#comps} )); then
        compadd -Q -- "${(@)comps%%$'\t'*}"
    elif (( (directive & 4) == 0 )); then
        _files
    fi
}
compdef _kubectl_ray kubectl-ray
"""

FISH = r"""# fish completion for kubectl-ray (kubectl ray completion fish)
function __kubectl_ray_complete
    set -l args (commandline -opc)
    set -e args[1]
    kubectl-ray __complete $args (commandline -ct) 2>/dev/null | string match -v -r '^:'
end
complete -c kubectl-ray -f -a '(__kubectl_ray_complete)'
"""

SCRIPTS = {"bash": BASH, "zsh": ZSH, "fish": FISH}

__all__ = ["BASH", "FISH", "SCRIPTS", "ZSH"]

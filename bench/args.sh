# Shared argument checks for the bench scripts (source it before bench/lib.sh, which builds
# fairbench: bad input is refused before any work starts).

# whole_numbers SCRIPT VAR...: each VAR must be a whole number from 1 up; else one line naming
# it, and exit 2.
whole_numbers() {
  local script=$1 n
  shift
  for n in "$@"; do
    case "${!n}" in '' | *[!0-9]* | 0) echo "$script: $n must be a whole number from 1 up, not '${!n}'" >&2; exit 2 ;; esac
  done
}

# need_tool SCRIPT TOOL PACKAGE: TOOL must be on PATH; else one line saying what to install.
need_tool() {
  command -v "$2" >/dev/null || { echo "$1: $2 is not installed: apt-get install $3" >&2; exit 2; }
}

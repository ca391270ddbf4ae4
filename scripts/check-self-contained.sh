#!/usr/bin/env bash
# Fails when a file of the repository refers to something outside the repository: the build, the
# tests and the docs must work, and make sense, in a clone that has nothing beside it.
#
#   scripts/check-self-contained.sh [ROOT]      (ROOT: the repository, default: this script's repo)
#
# Checked in every tracked file, and in untracked files that git does not ignore:
#   1. fragments that name the team's material kept beside the checkout, or the wording that
#      cites it instead of stating a rule (the list is built from pieces below, so that this file
#      does not match itself);
#   2. relative paths that start with "../": resolved from the file's directory, they must stay
#      inside ROOT and name something that exists;
#   3. citations of a Markdown file that the repository does not have: a bare file name that no
#      file of the repository carries, or a path under one of its top-level directories that does
#      not exist (paths under other directories are taken as citations of upstream repositories).
# Prints one line per finding, "file:line: what", and exits 1 if there is any. Runs in ctest
# ("repo: self-contained"), so `make test` counts it.
set -euo pipefail

root=$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)
cd "$root"

list_files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard
  else
    # A source tarball: everything but build outputs.
    find . \( -name .git -o -name 'build*' \) -prune -o -type f -print0 | sed -z 's#^\./##'
  fi
}
files=()
while IFS= read -r -d '' f; do
  [[ -f $f ]] && files+=("$f") # listed but deleted in the work tree: nothing to read
done < <(list_files)
((${#files[@]} > 0)) || { echo "check-self-contained: no files found under $root" >&2; exit 1; }

findings=0
report() {
  printf '%s\n' "$1"
  findings=$((findings + 1))
}

# 1. Fragments. "up" and "sh" keep the literal strings out of this file.
up='..''/'
sh='sha''red'
fragments=(
  "${up}${sh}"
  "${sh}/data"
  "${sh}/spec"
  "${sh}/reference"
  "/work/${sh}"
  "spec/labels""-v1"
  "design"" anchor"
  "design-""anchor"
)
grep_args=()
for f in "${fragments[@]}"; do grep_args+=(-e "$f"); done
while IFS= read -r hit; do
  report "$hit   <- refers to material outside the repository; state the fact or copy the data in"
done < <(printf '%s\0' "${files[@]}" | xargs -0 grep -H -n -I -i -F "${grep_args[@]}" -- || true)

# 2. Relative paths leaving the file's directory.
dotdot='\.\.'
rel_re="(${dotdot}/)+[A-Za-z0-9_.-][A-Za-z0-9_./-]*"
while IFS= read -r hit; do
  file=${hit%%:*}
  rest=${hit#*:}
  line=${rest%%:*}
  path=${rest#*:}
  path=${path%.} # a sentence may end right after the path
  dir=$(dirname "$file")
  target=$(realpath -m --relative-to="$root" "$root/$dir/$path")
  if [[ $target == .. || $target == ../* ]]; then
    report "$file:$line: $path   <- leaves the repository (resolves to $target from $dir)"
  elif [[ ! -e $root/$target ]]; then
    report "$file:$line: $path   <- names $target, which does not exist in the repository"
  fi
done < <(printf '%s\0' "${files[@]}" | xargs -0 grep -H -n -o -I -E "$rel_re" -- || true)

# 3. Markdown citations. URLs are matched first (leftmost-longest) and skipped: upstream pages may
# be cited by address.
declare -A basenames=() # file names that occur anywhere in the repository
for f in "${files[@]}"; do basenames[${f##*/}]=1; done
top_dirs=" $(printf '%s\n' "${files[@]}" | awk -F/ 'NF > 1 {print $1}' | sort -u | tr '\n' ' ')"
md_re='[a-z]+://[^[:space:])>`"]*|[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b'
while IFS= read -r hit; do
  file=${hit%%:*}
  rest=${hit#*:}
  line=${rest%%:*}
  ref=${rest#*:}
  [[ $ref == *://* ]] && continue
  ref=${ref#./}
  base=${ref##*/}
  if [[ $ref != */* ]]; then
    [[ -n ${basenames[$base]+x} ]] || report "$file:$line: $ref   <- no file of that name in the repository"
    continue
  fi
  first=${ref%%/*}
  if [[ $top_dirs == *" $first "* && ! -e $root/$ref && ! -e $root/$(dirname "$file")/$ref ]]; then
    report "$file:$line: $ref   <- no such file in the repository"
  fi
done < <(printf '%s\0' "${files[@]}" | xargs -0 grep -H -n -o -I -E "$md_re" -- || true)

if ((findings > 0)); then
  echo "check-self-contained: $findings reference(s) to paths outside the repository or to files it lacks" >&2
  exit 1
fi
echo "check-self-contained: ${#files[@]} files, no reference outside the repository"

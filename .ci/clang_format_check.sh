#!/usr/bin/env bash
# Every C++ file of the tree is laid out as .clang-format says (ctest clang_format). Prints the
# files that are not, with the diff of the first; exits 1 if any.
#   .ci/clang_format_check.sh [REPO_ROOT]      fix them with: clang-format-14 -i FILE...
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
format=$(command -v clang-format-14 || command -v clang-format)
bad=()
while IFS= read -r -d '' f; do
    if ! "$format" --dry-run --Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done < <(find pricing service tests -path '*/generated/*' -prune -o \( -name '*.cpp' -o -name '*.hpp' \) -print0)
if ((${#bad[@]})); then
    printf 'not laid out as .clang-format says: %s\n' "${bad[@]}"
    "$format" "${bad[0]}" | diff "${bad[0]}" - | head -40 || true
    exit 1
fi
echo "clang-format: every C++ file as .clang-format says"

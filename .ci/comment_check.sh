#!/usr/bin/env bash
# Comments and documents speak in the project's terms: no numbers of an issue tracker that is
# not part of the repository (say what was wrong and where it is documented instead), and no
# absolute paths of one machine. Left out: CHANGELOG.md (history), the data files (*.csv: their
# sources cite other projects' trackers), and schema/migrations/ (applied migrations are
# checksummed; editing one makes every database migrated with it refuse to start).
#   .ci/comment_check.sh REPO_ROOT
set -euo pipefail
cd "$1"
pattern='\b[Ii]ssues? #?[0-9]+|/(work|home|root)/'
out=$(grep -rnIE "$pattern" --exclude-dir=node_modules --exclude-dir=dist --exclude='*.csv' \
          --exclude=comment_check.sh pricing service tests web docs schema/seed clients docker \
          .ci README.md SECURITY.md CMakeLists.txt CMakePresets.json openapi.yaml || true)
if [[ -n "$out" ]]; then
    echo "$out"
    echo "comment_check: $(wc -l <<<"$out") lines cite an issue number or a machine's path"
    exit 1
fi
echo "comment_check: no issue numbers or machine paths"

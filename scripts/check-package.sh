#!/usr/bin/env bash
# Every publishable crate packages: `cargo package` of the whole workspace
# (cargo resolves the members against each other through a local overlay
# registry, in dependency order), without building the packages (a second
# full build of the workspace; `cargo publish --dry-run -p X` does that).
# Fails on a path dependency without a version, missing metadata, a file
# outside the package, or a crate that should be `publish = false`.
set -euo pipefail
cd "$(dirname "$0")/.."
# Crates that are not published (`publish = false`), by folder.
unpublished=(integration-tests examples)
excludes=()
for dir in "${unpublished[@]}"; do
  grep -q '^publish = false' "$dir/Cargo.toml" || { echo "check-package: $dir must say publish = false" >&2; exit 1; }
  name=$(sed -n 's/^name = "\(.*\)"$/\1/p' "$dir/Cargo.toml" | head -1)
  excludes+=(--exclude "$name")
done
packages="${CARGO_TARGET_DIR:-target}/package"
rm -f "$packages"/*.crate
out=$(cargo package --workspace "${excludes[@]}" --no-verify --allow-dirty --offline 2>&1) || { printf '%s\n' "$out" >&2; exit 1; }
if grep -q '^warning' <<<"$out"; then
  printf '%s\n' "$out" >&2
  echo "check-package: cargo package warned (missing metadata?)" >&2
  exit 1
fi
printf '%s\n' "$out" | grep '^ *Packaging'
for crate in "$packages"/*.crate; do
  files=$(tar tzf "$crate")
  for f in LICENSE-MIT LICENSE-APACHE README.md; do
    grep -qx "[^/]*/$f" <<<"$files" || { echo "check-package: $crate lacks $f" >&2; exit 1; }
  done
done
echo "check-package: every publishable crate packages"

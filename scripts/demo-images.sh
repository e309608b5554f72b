#!/usr/bin/env bash
# The README's pictures: sapling-demo headless, one frame per scene, into
# docs/images/demo-<scene>.png (1024x576). Deterministic but for the
# broad-phase times printed in each picture, which are this machine's.
#   scripts/demo-images.sh [BUILD_DIR]      (make demo-images)
set -euo pipefail
cd "$(dirname "$0")/.."
demo=${1:-build}/tools/demo/sapling-demo
[[ -x $demo ]] || { echo "no $demo: build with SDL2 and libpng installed (make build)" >&2; exit 1; }
out=docs/images
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# picture scene algorithm frames count (0: the scene's)
while read -r name scene algo frames count; do
  "$demo" --headless --size 1024x576 --scene "$scene" --algo "$algo" --frames "$frames" --every "$frames" \
    --count "$count" --out "$tmp/$name" >/dev/null
  cp "$tmp/$name/frame-$(printf %05d "$frames").png" "$out/demo-$name.png"
  echo "$out/demo-$name.png: $scene on $algo, frame $frames"
done <<'SCENES'
pile pile sap 300 0
mixed mixed sap 90 0
ground ground box-pruning 120 0
particles particles unisize 60 0
spawn spawn sap 200 0
flat flat dual-axis 90 0
box-pruning-cells particles box-pruning 30 4000
SCENES

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
# scene algorithm frames
while read -r scene algo frames; do
  "$demo" --headless --size 1024x576 --scene "$scene" --algo "$algo" --frames "$frames" --every "$frames" \
    --out "$tmp/$scene" >/dev/null
  cp "$tmp/$scene/frame-$(printf %05d "$frames").png" "$out/demo-$scene.png"
  echo "$out/demo-$scene.png: $scene on $algo, frame $frames"
done <<'SCENES'
pile sap 300
mixed sap 90
ground box-pruning 120
particles unisize 60
spawn sap 200
flat dual-axis 90
SCENES

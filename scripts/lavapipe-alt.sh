#!/bin/sh
# lavapipe-alt.sh RELEASE DIR: unpack the lavapipe (Mesa's CPU Vulkan
# driver) of a Debian release, e.g. bookworm (Mesa 22.3) or
# bookworm-backports (Mesa 25.0), into DIR without installing it, and print
# the environment that makes the Vulkan loader use it. `make deps` installs
# one Mesa; this runs the suite on the other, e.g.
#   eval "$(scripts/lavapipe-alt.sh bookworm /opt/mesa22)" && make test
# (the bookworm-backports suite must be in apt's sources: make deps adds it).
set -eu
rel=${1:?release, e.g. bookworm or bookworm-backports}
dir=${2:?directory to unpack into}
rm -rf "$dir/debs" "$dir/root"
mkdir -p "$dir/debs" "$dir/root"
dir=$(cd "$dir" && pwd)
cd "$dir/debs"
# lavapipe, the gallium library of the same version (split out from Mesa
# 24 on), and libdrm, which moves with Mesa in backports.
# The version each package has in that release (apt's -t would keep an
# installed newer one).
ver() { apt-cache madison "$1" | awk -v r=" $rel/" 'index($0, r) { print $3; exit }'; }
v=$(ver mesa-vulkan-drivers)
[ -n "$v" ] || { echo "lavapipe-alt: no mesa-vulkan-drivers in $rel (is it in apt's sources?)" >&2; exit 1; }
apt-get download "mesa-vulkan-drivers=$v" >/dev/null
apt-get download "mesa-libgallium=$v" >/dev/null 2>&1 || true
for p in libdrm2 libdrm-amdgpu1; do
	pv=$(ver "$p")
	[ -z "$pv" ] || apt-get download "$p=$pv" >/dev/null 2>&1 || true
done
for d in ./*.deb; do dpkg-deb -x "$d" "$dir/root"; done
lib=$dir/root/usr/lib/x86_64-linux-gnu
sed "s#\"library_path\": *\"[^\"]*\"#\"library_path\": \"$lib/libvulkan_lvp.so\"#" \
	"$dir"/root/usr/share/vulkan/icd.d/lvp_icd*.json >"$dir/lvp_icd.json"
echo "export VK_ICD_FILENAMES=$dir/lvp_icd.json LD_LIBRARY_PATH=$lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"

#!/usr/bin/env bash
# mkroot.sh OUT.cpio.gz DPUSIM_HW: builds the guest initramfs for check-rdma
# from this machine's Debian packages (see /work/shared/notes/soft-roce-vm.md):
# static busybox, Debian's kernel modules for Soft-RoCE (rdma_rxe) and a dummy
# netdev, the rxe verbs provider, Open MPI (mpirun, orted, plugins), iproute2's
# ip and rdma, dpusim-hw and dpusim beside it, the profiles and the guest's test script.
set -euo pipefail
out=$1 hw=$2
here=$(cd "$(dirname "$0")" && pwd) top=$(cd "$here/../.." && pwd)
kver=$(ls /lib/modules | sort -V | tail -1)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

mkdir -p "$root"/{bin,dev,proc,sys,tmp,etc,usr/bin,usr/lib/x86_64-linux-gnu,lib64,work,mods}
ln -s usr/lib "$root/lib"
ln -s /proc/mounts "$root/etc/mtab"
cp /bin/busybox "$root/bin/busybox"

# Kernel modules, in load order: rdma_rxe's dependencies as modprobe lists
# them, crc32 (rxe needs the shash, its dependency list does not name it), dummy.
: >"$root/mods/order"
for m in crc32_generic crc32-pclmul rdma_rxe dummy; do
	modprobe -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r ko; do
	cp "$ko" "$root/mods/"
	basename "$ko" >>"$root/mods/order"
done

# Files to copy with the shared libraries they need.
copy() { # copy PATH...: into the same path under root
	for f in "$@"; do
		mkdir -p "$root$(dirname "$f")"
		cp -L "$f" "$root$f"
	done
}
# dpusim itself, beside dpusim-hw, for the run and compare of the p2p replay
sim=$(dirname "$hw")/dpusim
elfs=(/usr/bin/ip /usr/bin/rdma /usr/bin/orterun /usr/bin/orted "$hw" "$sim")
copy /usr/bin/ip /usr/bin/rdma /usr/bin/orterun /usr/bin/orted
ln -s orterun "$root/usr/bin/mpirun"
cp "$hw" "$root/usr/bin/dpusim-hw"
cp "$sim" "$root/usr/bin/dpusim"
# Open MPI and PMIx load their components at run time; rxe is a verbs provider.
for d in /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 \
	 /usr/share/openmpi /usr/share/pmix /etc/openmpi; do
	[ -e "$d" ] || continue
	mkdir -p "$root$(dirname "$d")"
	cp -a "$d" "$root$d"
done
# Only the rxe provider: the others would each warn that their library is absent.
copy /etc/libibverbs.d/rxe.driver /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so
elfs+=(/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so)
while read -r so; do elfs+=("$so"); done < <(find /usr/lib/x86_64-linux-gnu/openmpi \
	/usr/lib/x86_64-linux-gnu/pmix2 -name '*.so*' -type f)
for e in "${elfs[@]}"; do
	ldd "$e" 2>/dev/null | awk '/=> \// { print $3 }'
done | sort -u | while read -r lib; do copy "$lib"; done
copy /lib64/ld-linux-x86-64.so.2
ldconfig -r "$root" 2>/dev/null || true

# The profiles, as a source tree's models/profiles: guest.sh sets DPUSIM_DATADIR.
mkdir -p "$root/work/models" "$root/work/tests"
cp -a "$top/models/profiles" "$root/work/models/"
cp "$here/guest.sh" "$root/work/guest.sh"
cp "$top/tests/e2e/hw-lsan.supp" "$root/work/hw-lsan.supp"
cp "$here/rxe-allreduce2.yaml" "$root/work/tests/"
cp "$here/rxe-train-pp2.yaml" "$root/work/tests/"
cp "$here/rxe-p2p.yaml" "$root/work/tests/"
cp "$here/init" "$root/init"
chmod +x "$root/init" "$root/work/guest.sh"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
echo "mkroot: $(du -h "$out" | cut -f1) initramfs, kernel $kver, $(wc -l <"$root/mods/order") modules"

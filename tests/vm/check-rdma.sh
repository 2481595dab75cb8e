#!/usr/bin/env bash
# check-rdma.sh DPUSIM_HW [LOG]: boots Debian's kernel under qemu (TCG; KVM does not
# work on these machines) with an initramfs holding dpusim-hw, creates a
# Soft-RoCE device and runs probe, verbs bench, replay and fault cases across
# 2 ranks. Passes only when the guest reports every case passed. LOG (optional)
# keeps the guest's console.
set -uo pipefail
hw=$1 log=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
kver=$(ls /lib/modules 2>/dev/null | sort -V | tail -1)
kernel=/boot/vmlinuz-$kver
if [ -z "$kver" ] || [ ! -r "$kernel" ] || ! command -v qemu-system-x86_64 >/dev/null; then
	echo "check-rdma: needs qemu-system-x86 linux-image-amd64 busybox-static kmod cpio" >&2
	echo "check-rdma: run tools/install-deps --vm" >&2
	exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$here/mkroot.sh" "$work/initrd.gz" "$hw" || exit 2
timeout 900 qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 2 -m 1536 -nographic \
	-no-reboot -nic none -kernel "$kernel" -initrd "$work/initrd.gz" \
	-append 'console=ttyS0 quiet panic=-1' </dev/null | tee "$work/console.log" |
	grep -E --line-buffered '^(ok|not ok) - |passed, .* failed|dpusim-hw: .*error'
[ -n "$log" ] && cp "$work/console.log" "$log"
tally=$(grep -aE '^[0-9]+ passed, [0-9]+ failed' "$work/console.log" | tail -1 | tr -d '\r')
echo "check-rdma: guest says: ${tally:-nothing (it did not finish)}"
case "$tally" in
*" passed, 0 failed") exit 0 ;;
*)	# The whole console (a few KB): a failed check's cause (the bench's or
	# replay's own output, an MPI message) is printed well before the last
	# lines, and a flake seen once must be readable in the test's log.
	echo "check-rdma: the guest's console:"
	tr -d '\r' <"$work/console.log"
	exit 1 ;;
esac

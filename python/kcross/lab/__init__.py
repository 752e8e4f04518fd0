"""Full-system QEMU labs (issue 8): kcross on real ppc64le, aarch64 and x86-64 kernels.

``kernel`` fetches Debian's kernel package for a target arch through a private APT
configuration (no foreign dpkg architecture added to the system) and checks a user's own
kernel file; ``initramfs`` builds the guest's reproducible initramfs (its /init is
lab/init.c) and reads the results back from the guest's console.
"""

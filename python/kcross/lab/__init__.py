"""Full-system QEMU labs (issue 8): kcross on real ppc64le, aarch64 and x86-64 kernels.

``kernel`` fetches Debian's kernel package for a target arch through a private APT
configuration (no foreign dpkg architecture added to the system) and checks a user's own
kernel file.
"""

"""Full-system QEMU labs: real kernels of other architectures (issue 8)."""

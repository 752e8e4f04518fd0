# Cross build for x86-64 with Debian's cross compiler (gcc-x86-64-linux-gnu; on an x86-64
# host, x86_64-linux-gnu-gcc is the native compiler): static, like the other two, so that
# the lab's guest payload (issue 8) is built the same way on every arch.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-linux-gnu-gcc)
set(CMAKE_ASM_COMPILER x86_64-linux-gnu-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# Static executables: they run alone in the lab's initramfs.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")

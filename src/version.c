/* SPDX-License-Identifier: MIT */
#include <kcross/kcross.h>
#include "kcross_version.h"

const char *kc_version(void)
{
	return KCROSS_VERSION;
}

const char *kc_git_rev(void)
{
	return KCROSS_GIT_REV;
}

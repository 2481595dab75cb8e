/* The version make stamps into every binary: `git describe` in a checkout,
 * else the release in VERSION (tools/version). Reports carry it, and through
 * them the database rows; --version prints it. */
#ifndef DPUSIM_TOOLS_VERSION_H
#define DPUSIM_TOOLS_VERSION_H

/* Defined in $(BUILD)/version.c, which make writes (Makefile). */
extern const char dpusim_version[];

#endif

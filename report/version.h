/* The version make stamps into every binary: `git describe` in a checkout,
 * else the release in VERSION (tools/version). Reports carry it, and through
 * them the database rows; --version prints it. */
#ifndef DPUSIM_REPORT_VERSION_H
#define DPUSIM_REPORT_VERSION_H

/* Defined in $(BUILD)/report/version.c, which make writes (report/report.mk). */
extern const char dpusim_version[];

#endif

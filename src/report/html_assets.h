/* SPDX-License-Identifier: Apache-2.0 */
/*
 * html_assets.h - the HTML report's page template, stylesheet and
 * renderer (src/report/html/report.{html,css,js}), compiled into the
 * binary as byte arrays by cmake/embed.cmake (gen/html_assets.gen.c), so
 * that a report needs no file beside the executable and nothing from the
 * network.  The generator refuses a stylesheet or script that holds
 * "</" or "<!--" (they would end or confuse their element), and each
 * array is NUL-terminated (len excludes the NUL).
 */
#ifndef XP_REPORT_HTML_ASSETS_H
#define XP_REPORT_HTML_ASSETS_H

#include <stddef.h>

extern const char xp_html_asset_template[];
extern const size_t xp_html_asset_template_len;
extern const char xp_html_asset_css[];
extern const size_t xp_html_asset_css_len;
extern const char xp_html_asset_js[];
extern const size_t xp_html_asset_js_len;

#endif /* XP_REPORT_HTML_ASSETS_H */

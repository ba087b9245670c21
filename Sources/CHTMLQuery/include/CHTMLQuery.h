#ifndef BRIDGE_HTML_QUERY_H
#define BRIDGE_HTML_QUERY_H

#include <stddef.h>

/* One element matched by an XPath query over an HTML page. All strings are malloc'd UTF-8. */
typedef struct {
    char *name;
    char *text;
    int attribute_count;
    char **attribute_names;
    char **attribute_values;
} html_query_element;

/* Parses html with libxml2's HTML parser and evaluates xpath. Returns the number of elements written to
   *elements (free with html_query_free), or -1 if the page or the expression cannot be parsed.
   libxml2's headers stay inside the C file: they pull in ICU headers that clash with Foundation's. */
int html_query(const char *html, size_t length, const char *xpath, html_query_element **elements);

void html_query_free(html_query_element *elements, int count);

#endif

#include "CHTMLQuery.h"

#include <stdlib.h>
#include <string.h>
#include <libxml/HTMLparser.h>
#include <libxml/tree.h>
#include <libxml/xpath.h>

static char *copy_text(xmlChar *value) {
    char *copy = strdup(value ? (const char *)value : "");
    if (value) xmlFree(value);
    return copy;
}

int html_query(const char *html, size_t length, const char *xpath, html_query_element **elements) {
    *elements = NULL;
    htmlDocPtr document = htmlReadMemory(html, (int)length, "page.html", "UTF-8",
                                         HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET);
    if (!document) return -1;
    xmlXPathContextPtr context = xmlXPathNewContext(document);
    xmlXPathObjectPtr result = context ? xmlXPathEvalExpression((const xmlChar *)xpath, context) : NULL;
    int count = -1;
    if (result) {
        xmlNodeSetPtr nodes = result->nodesetval;
        count = nodes ? nodes->nodeNr : 0;
        if (count > 0) *elements = calloc((size_t)count, sizeof(html_query_element));
        for (int i = 0; i < count; i++) {
            xmlNodePtr node = nodes->nodeTab[i];
            html_query_element *element = &(*elements)[i];
            element->name = strdup(node->name ? (const char *)node->name : "");
            element->text = copy_text(xmlNodeGetContent(node));
            int attributes = 0;
            for (xmlAttrPtr a = node->type == XML_ELEMENT_NODE ? node->properties : NULL; a; a = a->next) attributes++;
            element->attribute_count = attributes;
            element->attribute_names = calloc((size_t)attributes + 1, sizeof(char *));
            element->attribute_values = calloc((size_t)attributes + 1, sizeof(char *));
            int j = 0;
            for (xmlAttrPtr a = node->type == XML_ELEMENT_NODE ? node->properties : NULL; a; a = a->next, j++) {
                element->attribute_names[j] = strdup((const char *)a->name);
                element->attribute_values[j] = copy_text(xmlNodeGetContent((xmlNodePtr)a));
            }
        }
        xmlXPathFreeObject(result);
    }
    if (context) xmlXPathFreeContext(context);
    xmlFreeDoc(document);
    return count;
}

void html_query_free(html_query_element *elements, int count) {
    if (!elements) return;
    for (int i = 0; i < count; i++) {
        free(elements[i].name);
        free(elements[i].text);
        for (int j = 0; j < elements[i].attribute_count; j++) {
            free(elements[i].attribute_names[j]);
            free(elements[i].attribute_values[j]);
        }
        free(elements[i].attribute_names);
        free(elements[i].attribute_values);
    }
    free(elements);
}

#include <stdio.h>
int main(void) { puts("ulpscope: under construction"); return 0; }

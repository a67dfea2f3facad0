name = broken
fmaa = yes

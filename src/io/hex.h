/* hex.h — hexadecimal digits, for the escapes of the text formats (YSON \x.., YPath \x..). */
#ifndef PS_IO_HEX_H
#define PS_IO_HEX_H

/* The value 0..15 of the hexadecimal digit c (either case), or -1 when c is not one. */
int ps_hex_digit_value(char c);

#endif

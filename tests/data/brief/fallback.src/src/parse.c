/* parser: the sources of this checkout; the profile is of another build */

this is not a profile at all

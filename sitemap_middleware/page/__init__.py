"""What a page says about itself, read in the writer thread: its head, ``Link``
header, content fingerprint, title and the facts recording takes from them."""

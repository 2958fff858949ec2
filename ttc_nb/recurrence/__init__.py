"""A decoder whose top block repeats, against decoders trained longer or deeper at equal FLOPs."""

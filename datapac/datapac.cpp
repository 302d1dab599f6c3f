// The SSD model and DataPac enclosure arrive with the I/O engine (issue 3).

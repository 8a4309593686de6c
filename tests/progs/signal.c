/* placeholder: replaced by the test author */
int main(void) { return 77; }

/* robot_dynamics.kernels._entry: a single-state fast path's call into its compiled kernel, in C.
 *
 * Entry(kinds, resolve) is the C entry point of one kernel (a numba cfunc of kernels/entries.py,
 * int64 f(void **data, intp *shapes): argument i's data pointer in data[i], its shape in
 * shapes[2 i], shapes[2 i + 1]). `kinds` says what each argument is, two characters each: 'd'
 * (float64) or 'b' (bool) and its ndim ('1', '2'), or 'o' and the ndim of the output: that argument
 * is the output's shape (an int, or a tuple of two) and the array is made here, or an array to write.
 * resolve() gives the cfunc's address, called once, at the first call (the cfunc compiles or loads
 * from numba's cache then).
 *
 * entry(*args) -> the output, or None when an argument is not what the kernel takes (an array of that
 * dtype and ndim, C-contiguous, aligned, in native byte order; the output also writeable) or the kernel
 * returns a non-zero status: the caller then takes its checked path, which names the problem. The
 * kernels check the lengths themselves (common.sized).
 *
 * Why: numba's own entry point (a dispatcher's compiled wrapper) unboxes each array through Python
 * objects and numpy's np.empty is a Python call: ~0.25 us of a call whose kernel, on a 6-joint arm,
 * takes ~0.15-0.3 us (bench_dynamics.py's one-joint rows are that fixed cost).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#define MAX_ARGS 12

typedef long long (*kernel_fn)(void **data, npy_intp *shapes);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    kernel_fn fn;           /* NULL until resolved */
    PyObject *resolve;
    int nargs, out;         /* argument count; the output's position */
    int type[MAX_ARGS], ndim[MAX_ARGS];
} Entry;

/* an array the kernel can take at argument i: its dtype, ndim and layout; the output writeable too */
static int usable(Entry *self, PyObject *x, int i) {
    if (!PyArray_CheckExact(x))
        return 0;
    PyArrayObject *a = (PyArrayObject *)x;
    return PyArray_TYPE(a) == self->type[i] && PyArray_NDIM(a) == self->ndim[i] && PyArray_IS_C_CONTIGUOUS(a)
           && PyArray_ISALIGNED(a) && PyArray_ISNOTSWAPPED(a) && (i != self->out || PyArray_ISWRITEABLE(a));
}

static PyObject *output(Entry *self, PyObject *shape) {
    if (PyArray_CheckExact(shape)) {
        if (!usable(self, shape, self->out))
            Py_RETURN_NONE;
        Py_INCREF(shape);
        return shape;
    }
    npy_intp dims[2];
    int nd = self->ndim[self->out];
    if (nd == 1) {
        dims[0] = PyLong_AsSsize_t(shape);
    } else {
        if (!PyTuple_Check(shape) || PyTuple_GET_SIZE(shape) != nd) {
            PyErr_SetString(PyExc_TypeError, "Entry: the output's shape must be a tuple of its ndim");
            return NULL;
        }
        for (int k = 0; k < nd; k++)
            dims[k] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, k));
    }
    if (PyErr_Occurred())
        return NULL;
    return PyArray_SimpleNew(nd, dims, NPY_DOUBLE);
}

static PyObject *entry_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Entry *self = (Entry *)callable;
    if (PyVectorcall_NARGS(nargsf) != self->nargs || kwnames != NULL) {
        PyErr_Format(PyExc_TypeError, "Entry takes %d positional arguments", self->nargs);
        return NULL;
    }
    if (self->fn == NULL) {
        PyObject *address = PyObject_CallNoArgs(self->resolve);
        if (address == NULL)
            return NULL;
        self->fn = (kernel_fn)PyLong_AsVoidPtr(address);
        Py_DECREF(address);
        if (self->fn == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "Entry: resolve() gave no address");
            return NULL;
        }
    }
    PyObject *out = output(self, args[self->out]);
    if (out == NULL || out == Py_None)
        return out;
    void *data[MAX_ARGS];
    npy_intp shapes[2 * MAX_ARGS];
    for (int i = 0; i < self->nargs; i++) {
        PyObject *x = i == self->out ? out : args[i];
        if (i != self->out && !usable(self, x, i)) {
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
        PyArrayObject *a = (PyArrayObject *)x;
        data[i] = PyArray_DATA(a);
        shapes[2 * i] = PyArray_DIM(a, 0);
        shapes[2 * i + 1] = self->ndim[i] > 1 ? PyArray_DIM(a, 1) : 0;
    }
    if (self->fn(data, shapes) != 0) {
        Py_DECREF(out);
        Py_RETURN_NONE;
    }
    return out;
}

static PyObject *entry_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    const char *kinds;
    Py_ssize_t length;
    PyObject *resolve;
    static char *keywords[] = {"kinds", "resolve", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s#O:Entry", keywords, &kinds, &length, &resolve))
        return NULL;
    if (length % 2 || length / 2 > MAX_ARGS || !PyCallable_Check(resolve)) {
        PyErr_Format(PyExc_ValueError, "Entry: kinds takes up to %d pairs (dtype or 'o', ndim) and resolve a "
                     "callable", MAX_ARGS);
        return NULL;
    }
    Entry *self = (Entry *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = entry_call;
    self->nargs = (int)(length / 2);
    self->out = -1;
    for (int i = 0; i < self->nargs; i++) {
        char t = kinds[2 * i], n = kinds[2 * i + 1];
        self->ndim[i] = n - '0';
        self->type[i] = t == 'b' ? NPY_BOOL : NPY_DOUBLE;
        if (t == 'o') {
            if (self->out >= 0) {
                Py_DECREF(self);
                PyErr_SetString(PyExc_ValueError, "Entry: one output ('o') only");
                return NULL;
            }
            self->out = i;
        }
        if ((t != 'd' && t != 'b' && t != 'o') || self->ndim[i] < 1 || self->ndim[i] > 2) {
            Py_DECREF(self);
            PyErr_Format(PyExc_ValueError, "Entry: argument %d's kind %c%c is not d1, d2, b1, b2, o1 or o2", i, t, n);
            return NULL;
        }
    }
    if (self->out < 0) {
        Py_DECREF(self);
        PyErr_SetString(PyExc_ValueError, "Entry: no output ('o') among the kinds");
        return NULL;
    }
    Py_INCREF(resolve);
    self->resolve = resolve;
    return (PyObject *)self;
}

static int entry_traverse(Entry *self, visitproc visit, void *arg) {
    Py_VISIT(self->resolve);
    return 0;
}

static int entry_clear(Entry *self) {
    Py_CLEAR(self->resolve);
    return 0;
}

static void entry_dealloc(Entry *self) {
    PyObject_GC_UnTrack(self);
    entry_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject EntryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "robot_dynamics.kernels._entry.Entry",
    .tp_doc = "Entry(kinds, resolve): a kernel's C entry point (see the module).",
    .tp_basicsize = sizeof(Entry),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC,
    .tp_new = entry_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Entry, vectorcall),
    .tp_traverse = (traverseproc)entry_traverse,
    .tp_clear = (inquiry)entry_clear,
    .tp_dealloc = (destructor)entry_dealloc,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "robot_dynamics.kernels._entry",
    "The single-state fast paths' call into their compiled kernels (Entry).", -1, NULL,
};

PyMODINIT_FUNC PyInit__entry(void) {
    import_array();
    if (PyType_Ready(&EntryType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&EntryType);
    if (PyModule_AddObject(m, "Entry", (PyObject *)&EntryType) < 0) {
        Py_DECREF(&EntryType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

from rest_framework.routers import SimpleRouter

from forms_app.views import FormViewSet

router = SimpleRouter(trailing_slash=False)
router.register("forms", FormViewSet, basename="form")

urlpatterns = router.urls

from django.urls import path
from rest_framework.routers import SimpleRouter

from submissions.api.erasures import ErasureViewSet
from submissions.api.form_submissions import FormSubmissionViewSet
from submissions.intake.views import SubmitView

router = SimpleRouter(trailing_slash=False)
# A form's submissions, under the form's own path (forms_app/urls.py serves the form).
router.register("forms", FormSubmissionViewSet, basename="form")
router.register("erasures", ErasureViewSet, basename="erasure")

urlpatterns = [path("f/<str:slug>", SubmitView.as_view(), name="submit"), *router.urls]
